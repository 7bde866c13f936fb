import { equalText, otpHmac } from "./hmac.ts";

/** Channels an OTP can be sent on. */
export type OtpChannel = "email" | "sms" | "whatsapp";

/** `length` uniform decimal digits from the system CSPRNG (rejection sampling: no modulo bias). */
export function generateCode(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 250 = 25 * 10: bytes at or above it would make the digits 0–5 likelier.
      if (byte < 250 && out.length < length) out += String(byte % 10);
    }
  }
  return out;
}

/** The stored form of a code: base64 HMAC-SHA-256 over (session, channel, code). */
export function hashCode(key: Uint8Array, sessionId: string, channel: string, code: string): string {
  // Bound to the session and channel: a hash says nothing about another session's code.
  return otpHmac.sha256(key, `${sessionId}\u0000${channel}\u0000${code}`).toBase64();
}

/** A stored hash that matches no code, compared against when there is no session or channel. */
export const NO_HASH = new Uint8Array(32).toBase64();

/** True when `code` is the one whose hash is `stored`; always computes one HMAC and a full compare. */
export function codeMatches(
  key: Uint8Array,
  sessionId: string,
  channel: string,
  code: string,
  stored: string | undefined,
): boolean {
  const equal = equalText(hashCode(key, sessionId, channel, code), stored ?? NO_HASH);
  return equal && stored !== undefined;
}
