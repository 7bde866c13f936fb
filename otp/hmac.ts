import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";

type Keyed = ReturnType<typeof hmac.create>;

const encoder = new TextEncoder();
/** The HMAC state of each key after its padded key block: a call then hashes only its message. */
const keyed = new WeakMap<Uint8Array, Keyed>();

/**
 * HMAC-SHA-256 for the OTP role's codes and session tokens. Synchronous and in JavaScript
 * (`@noble/hashes`, audited): Web Crypto's `subtle.sign`/`verify` are async ops that cost 40–80 µs
 * of main-thread time per call under load, and `node:crypto`'s createHmac 10–13 µs through Deno's
 * Node layer (Buffer conversions, two ops), against about 4 µs here with each key's padded block
 * hashed once. A verify does two or three. An object so a test can count the calls (every verify
 * path does the same number).
 */
export const otpHmac = {
  sha256(key: Uint8Array, data: string): Uint8Array {
    let base = keyed.get(key);
    if (!base) {
      base = hmac.create(sha256, key);
      keyed.set(key, base);
    }
    return base.clone().update(encoder.encode(data)).digest();
  },
};

/**
 * True when two texts are equal (a MAC as sent against the one computed). The time taken depends
 * only on the lengths, which are not secret (a MAC's encoding has one length): every character is
 * compared, with no early exit.
 */
export function equalText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
