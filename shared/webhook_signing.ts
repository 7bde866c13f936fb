/**
 * Webhook signatures of the Standard Webhooks specification (https://www.standardwebhooks.com):
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`, keyed with the bytes of a
 * `whsec_<base64>` secret. Used to sign what we send and to verify Resend's (Svix) callbacks.
 */

const encoder = new TextEncoder();

/** How far a signed timestamp may be from now, in seconds (the specification's suggestion). */
export const DEFAULT_TOLERANCE_SECONDS = 5 * 60;

function toBase64(bytes: Uint8Array): string {
  let text = "";
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text);
}

function fromBase64(text: string): Uint8Array<ArrayBuffer> | undefined {
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A new endpoint secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(32)))}`;
}

/** Signing keys by secret: importing one cost about as much again as the signature it served (41 µs of 85 in a profile). */
const signingKeys = new Map<string, Promise<CryptoKey>>();
/** Secrets whose signing key is kept at most (a worker signs for the endpoints of many teams). */
const SIGNING_KEYS_KEPT = 1_000;

function signingKey(secret: string): Promise<CryptoKey> {
  let key = signingKeys.get(secret);
  if (!key) {
    if (signingKeys.size >= SIGNING_KEYS_KEPT) signingKeys.delete(signingKeys.keys().next().value!);
    key = hmacKey(secret, "sign");
    signingKeys.set(secret, key);
  }
  return key;
}

async function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  const bytes = fromBase64(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret);
  if (!bytes || bytes.length === 0) throw new Error("Cannot use webhook secret: not base64");
  return await crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [usage]);
}

function signedContent(id: string, timestamp: number | string, body: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${id}.${timestamp}.${body}`);
}

/** The `v1,<base64>` signature of one message with one secret. */
export async function signWebhook(secret: string, id: string, timestamp: number, body: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await signingKey(secret), signedContent(id, timestamp, body));
  return `v1,${toBase64(new Uint8Array(mac))}`;
}

/**
 * The three headers of a signed delivery. With several secrets (during a rotation) the signature
 * header holds one signature per secret, separated by spaces; a receiver accepts any one of them.
 */
export async function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Promise<Record<string, string>> {
  const signatures = await Promise.all(secrets.map((s) => signWebhook(s, id, timestamp, body)));
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}

/** Options of {@linkcode verifyWebhook}. */
export interface VerifyOptions {
  /** Milliseconds since the epoch. */
  now?: number;
  toleranceSeconds?: number;
}

/**
 * True when the request's `webhook-*` (or Svix's `svix-*`) headers carry a `v1` signature of `body`
 * made with `secret`, and its timestamp is within the tolerance of now. Comparison is constant-time
 * (Web Crypto's HMAC verify).
 */
export async function verifyWebhook(
  secret: string,
  headers: Headers,
  body: string,
  options: VerifyOptions = {},
): Promise<boolean> {
  const id = headers.get("webhook-id") ?? headers.get("svix-id");
  const timestamp = headers.get("webhook-timestamp") ?? headers.get("svix-timestamp");
  const signatures = headers.get("webhook-signature") ?? headers.get("svix-signature");
  if (!id || !timestamp || !signatures || !/^\d{1,12}$/.test(timestamp)) return false;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestamp)) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) {
    return false;
  }
  let key: CryptoKey;
  try {
    key = await hmacKey(secret, "verify");
  } catch {
    return false;
  }
  const content = signedContent(id, timestamp, body);
  for (const entry of signatures.split(" ")) {
    const [version, value] = entry.split(",", 2);
    if (version !== "v1" || !value) continue;
    const mac = fromBase64(value);
    if (mac && await crypto.subtle.verify("HMAC", key, mac, content)) return true;
  }
  return false;
}
