import { Buffer } from "node:buffer";
import { timingSafeEqual } from "node:crypto";
import { otpHmac } from "./hmac.ts";

/** What a session token carries. */
export interface SessionClaims {
  sessionId: string;
  teamId: string;
}

function base64url(bytes: Uint8Array | string): string {
  return Buffer.from(bytes).toString("base64url");
}

/**
 * The one protected header this service issues. A token is read only when its header is exactly
 * this, so `alg: none`, another algorithm or an added `kid`/`jku` is never even considered.
 */
const HEADER = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }));

function signature(key: Uint8Array, signingInput: string): string {
  return base64url(otpHmac.sha256(key, signingInput));
}

/**
 * Signs the session token: a standard JWT (HS256, readable by any JWT library with the secret) with
 * the session id as `sub` and the team as `tid`. It has no `exp`: the session's stored expiry rules,
 * and a resend extends it while the token stays the same. Made with `node:crypto` rather than jose
 * because the OTP verify path reads one per request and Web Crypto's async HMAC costs about 50 µs of
 * main-thread time per call under load (see otp/hmac.ts); `token_test.ts` checks both ways against jose.
 */
export function signSessionToken(key: Uint8Array, claims: SessionClaims, now: number): string {
  const payload = base64url(JSON.stringify({ tid: claims.teamId, sub: claims.sessionId, iat: Math.floor(now / 1000) }));
  const input = `${HEADER}.${payload}`;
  return `${input}.${signature(key, input)}`;
}

/** The claims of a token this service signed, or undefined for anything else. */
export function readSessionToken(key: Uint8Array, token: string): SessionClaims | undefined {
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== HEADER) return undefined;
  const expected = Buffer.from(signature(key, `${parts[0]}.${parts[1]}`));
  const given = Buffer.from(parts[2]);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1], "base64url").toString("utf8"));
    if (typeof payload?.sub !== "string" || typeof payload?.tid !== "string") return undefined;
    return { sessionId: payload.sub, teamId: payload.tid };
  } catch {
    return undefined;
  }
}
