import { jwtVerify, SignJWT } from "jose";

/** What a session token carries. */
export interface SessionClaims {
  sessionId: string;
  teamId: string;
}

/**
 * Signs the session token: a JWT (HS256) with the session id as `sub` and the team as `tid`. It has
 * no `exp`: the session's stored expiry rules, and a resend extends it while the token stays the same.
 */
export async function signSessionToken(key: CryptoKey, claims: SessionClaims, now: number): Promise<string> {
  return await new SignJWT({ tid: claims.teamId })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sessionId)
    .setIssuedAt(Math.floor(now / 1000))
    .sign(key);
}

/** The claims of a token this service signed, or undefined for anything else. */
export async function readSessionToken(key: CryptoKey, token: string, now: number): Promise<SessionClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ["HS256"], currentDate: new Date(now) });
    if (typeof payload.sub !== "string" || typeof payload.tid !== "string") return undefined;
    return { sessionId: payload.sub, teamId: payload.tid };
  } catch {
    return undefined;
  }
}
