import { equalText, otpHmac } from "./hmac.ts";

/** What a session token carries. */
export interface SessionClaims {
  sessionId: string;
  teamId: string;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

function base64url(bytes: Uint8Array): string {
  return bytes.toBase64({ alphabet: "base64url", omitPadding: true });
}

/**
 * The one protected header this service issues. A token is read only when its header is exactly
 * this, so `alg: none`, another algorithm or an added `kid`/`jku` is never even considered.
 */
const HEADER = base64url(encoder.encode(JSON.stringify({ alg: "HS256", typ: "JWT" })));

function signature(key: Uint8Array, signingInput: string): string {
  return base64url(otpHmac.sha256(key, signingInput));
}

/**
 * Signs the session token: a standard JWT (HS256, readable by any JWT library with the secret) with
 * the session id as `sub` and the team as `tid`. It has no `exp`: the session's stored expiry rules,
 * and a resend extends it while the token stays the same. Made with otp/hmac.ts rather than jose
 * because the OTP verify path reads one per request and Web Crypto's async HMAC costs about 50 µs of
 * main-thread time per call under load (see otp/hmac.ts); `token_test.ts` checks both ways against jose.
 */
export function signSessionToken(key: Uint8Array, claims: SessionClaims, now: number): string {
  const payload = base64url(
    encoder.encode(JSON.stringify({ tid: claims.teamId, sub: claims.sessionId, iat: Math.floor(now / 1000) })),
  );
  const input = `${HEADER}.${payload}`;
  return `${input}.${signature(key, input)}`;
}

/** Longer than any token this service signs (about 250 characters): not read at all. */
const MAX_TOKEN_LENGTH = 2_048;

/** The claims of a token this service signed, or undefined for anything else. */
export function readSessionToken(key: Uint8Array, token: string): SessionClaims | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || parts[0] !== HEADER) return undefined;
  if (!equalText(parts[2], signature(key, `${parts[0]}.${parts[1]}`))) return undefined;
  try {
    const payload = JSON.parse(decoder.decode(Uint8Array.fromBase64(parts[1], { alphabet: "base64url" })));
    if (typeof payload?.sub !== "string" || typeof payload?.tid !== "string") return undefined;
    return { sessionId: payload.sub, teamId: payload.tid };
  } catch {
    return undefined;
  }
}
