import type { Config } from "../shared/config.ts";
import { log } from "../shared/log.ts";
import { otpHmac } from "./hmac.ts";

/** The keys of the OTP role: one signs session tokens, the other hashes codes. */
export interface OtpKeys {
  /** HS256 key of the session tokens (the secret's bytes). */
  token: Uint8Array;
  /** HMAC-SHA-256 key of the stored code hashes (derived, so a token key never hashes codes). */
  code: Uint8Array;
}

const cache = new Map<string, OtpKeys>();
let processSecret: string | undefined;

/**
 * A secret for this process when OTP_TOKEN_SECRET is unset. Sessions then do not survive a
 * restart and are not shared between processes: set OTP_TOKEN_SECRET in production.
 */
function fallbackSecret(): string {
  if (!processSecret) {
    processSecret = crypto.randomUUID() + crypto.randomUUID();
    log("warn", "OTP_TOKEN_SECRET is not set: OTP sessions use a per-process secret and end on restart");
  }
  return processSecret;
}

function derive(secret: string): OtpKeys {
  const token = new TextEncoder().encode(secret);
  return { token, code: otpHmac.sha256(token, "otp-code-hash-v1") };
}

/** The OTP keys of this configuration (derived once per secret). */
export function otpKeys(config: Config): OtpKeys {
  const secret = config.OTP_TOKEN_SECRET ?? fallbackSecret();
  let keys = cache.get(secret);
  if (!keys) {
    keys = derive(secret);
    cache.set(secret, keys);
  }
  return keys;
}
