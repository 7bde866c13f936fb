import { createHmac } from "node:crypto";

/**
 * HMAC-SHA-256 for the OTP role's codes and session tokens. Synchronous through `node:crypto`:
 * Web Crypto's `subtle.sign`/`verify` are async ops that cost 40–80 µs of main-thread time per call
 * under load against about 7 µs here (measured in `bench --profile` and a micro-benchmark), and a
 * verify does two of them. An object so a test can count the calls (every verify path does the
 * same number).
 */
export const otpHmac = {
  sha256(key: Uint8Array, data: string): Uint8Array {
    return createHmac("sha256", key).update(data).digest();
  },
};
