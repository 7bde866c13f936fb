/**
 * Twilio's request signature: `X-Twilio-Signature` is the base64 HMAC-SHA1, keyed with the account's
 * auth token, of the full URL Twilio called followed by every POST parameter, sorted by name, as
 * name + value (a repeated name once per distinct value, values sorted).
 */

const encoder = new TextEncoder();

/** The string Twilio signs for a URL and form parameters. */
export function twilioSignedContent(url: string, params: URLSearchParams): string {
  const values = new Map<string, Set<string>>();
  for (const [name, value] of params) {
    if (!values.has(name)) values.set(name, new Set());
    values.get(name)!.add(value);
  }
  let content = url;
  for (const name of [...values.keys()].sort()) {
    for (const value of [...values.get(name)!].sort()) content += name + value;
  }
  return content;
}

function toBase64(bytes: ArrayBuffer): string {
  let text = "";
  for (const byte of new Uint8Array(bytes)) text += String.fromCharCode(byte);
  return btoa(text);
}

/** The signature Twilio sends for this URL and parameters. */
export async function twilioSignature(authToken: string, url: string, params: URLSearchParams): Promise<string> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(authToken), { name: "HMAC", hash: "SHA-1" }, false, [
    "sign",
  ]);
  return toBase64(await crypto.subtle.sign("HMAC", key, encoder.encode(twilioSignedContent(url, params))));
}

/** The URL with and without the scheme's default port (Twilio may have signed either). */
function withAndWithoutPort(url: string): string[] {
  const match = /^(https?):\/\/([^/?#]*)(.*)$/i.exec(url);
  if (!match) return [url];
  const [, scheme, authority, rest] = match;
  const portStart = authority.indexOf(":", authority.lastIndexOf("]") + 1);
  const host = portStart === -1 ? authority : authority.slice(0, portStart);
  const defaultPort = scheme.toLowerCase() === "https" ? "443" : "80";
  const port = portStart === -1 ? "" : authority.slice(portStart + 1);
  const bare = `${scheme}://${host}${rest}`;
  if (port && port !== defaultPort) return [url];
  return [bare, `${scheme}://${host}:${defaultPort}${rest}`];
}

/** Constant-time comparison of two strings (lengths may leak, contents do not). */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** True when `signature` is Twilio's signature of the parameters at any of the candidate URLs. */
export async function verifyTwilioSignature(
  authToken: string,
  signature: string | undefined,
  urls: readonly string[],
  params: URLSearchParams,
): Promise<boolean> {
  if (!signature) return false;
  for (const url of new Set(urls.flatMap(withAndWithoutPort))) {
    if (sameText(await twilioSignature(authToken, url, params), signature)) return true;
  }
  return false;
}
