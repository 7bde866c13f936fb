import { randomBase62 } from "./api_keys.ts";

/** The header a publishable-key request about a contact carries when its team requires contact tokens. */
export const CONTACT_TOKEN_HEADER = "X-Contact-Token";

const encoder = new TextEncoder();
const HEX_MAC = /^[0-9a-fA-F]{64}$/;

/** A new team secret for contact tokens (shown once, to the customer's server). */
export function newContactTokenSecret(): string {
  return `cts_${randomBase62(40)}`;
}

async function hmacKey(secret: string, usage: "sign" | "verify"): Promise<CryptoKey> {
  return await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    usage,
  ]);
}

/**
 * The contact token of an external id: lowercase hex of HMAC-SHA256 with the secret's UTF-8 bytes as
 * key and the external id's UTF-8 bytes as message (docs/contact-tokens.md).
 */
export async function contactToken(secret: string, externalId: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await hmacKey(secret, "sign"), encoder.encode(externalId));
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * True when `token` is the contact token of `externalId`. Web Crypto's verify compares the MACs in
 * constant time; a token that is not 64 hex characters is refused before.
 */
export async function contactTokenFits(secret: string, externalId: string, token: string): Promise<boolean> {
  if (!HEX_MAC.test(token)) return false;
  const mac = new Uint8Array(32);
  for (let i = 0; i < 32; i++) mac[i] = parseInt(token.slice(i * 2, i * 2 + 2), 16);
  return await crypto.subtle.verify("HMAC", await hmacKey(secret, "verify"), mac, encoder.encode(externalId));
}
