import type { Config } from "../shared/config.ts";
import { log } from "../shared/log.ts";

/** The keys of the OTP role: one signs session tokens, the other hashes codes. */
export interface OtpKeys {
  /** HS256 key of the session tokens. */
  token: CryptoKey;
  /** HMAC-SHA-256 key of the stored code hashes (derived, so a token key never hashes codes). */
  code: CryptoKey;
}

const cache = new Map<string, Promise<OtpKeys>>();
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

async function derive(secret: string): Promise<OtpKeys> {
  const raw = new TextEncoder().encode(secret);
  const hmac = { name: "HMAC", hash: "SHA-256" } as const;
  const token = await crypto.subtle.importKey("raw", raw, hmac, false, ["sign", "verify"]);
  const base = await crypto.subtle.importKey("raw", raw, hmac, false, ["sign"]);
  const codeBytes = await crypto.subtle.sign("HMAC", base, new TextEncoder().encode("otp-code-hash-v1"));
  const code = await crypto.subtle.importKey("raw", codeBytes, hmac, false, ["sign"]);
  return { token, code };
}

/** The OTP keys of this configuration (imported once per secret). */
export function otpKeys(config: Config): Promise<OtpKeys> {
  const secret = config.OTP_TOKEN_SECRET ?? fallbackSecret();
  let keys = cache.get(secret);
  if (!keys) {
    keys = derive(secret);
    cache.set(secret, keys);
  }
  return keys;
}
