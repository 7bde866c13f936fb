import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { hashKey, randomBase62 } from "../../shared/api_keys.ts";
import type { Db } from "../../shared/db.ts";
import type { Deps } from "../../shared/deps.ts";
import type { DashboardRole } from "../../shared/dashboard_users.ts";

/** A session ends after 12 hours without a request. */
export const IDLE_MS = 12 * 60 * 60_000;
/** …and 7 days after sign-in, however busy. */
export const ABSOLUTE_MS = 7 * 24 * 60 * 60_000;

/** The signed-in user of a request, with the team and the session's forgery token. */
export interface SessionUser {
  id: string;
  email: string;
  role: DashboardRole;
  teamId: string;
  teamName: string;
  /** The synchronizer token every form of this session must carry. */
  csrf: string;
}

/** Starts a session for the user; returns the token for the cookie (the database keeps only its hash). */
export async function createSession(
  db: Db,
  userId: string,
  userAgent: string | undefined,
  now: number,
): Promise<string> {
  const token = randomBase62(43);
  await db`
    insert into dashboard_sessions ${
    db({
      token_hash: await hashKey(token),
      user_id: userId,
      csrf_token: randomBase62(32),
      user_agent: userAgent?.slice(0, 300) ?? null,
      created_at: new Date(now),
      last_seen_at: new Date(now),
      expires_at: new Date(now + IDLE_MS),
    })
  }`;
  return token;
}

/**
 * The user of a live session, whose idle expiry moves forward (never past the absolute one);
 * undefined for an unknown, expired or revoked token.
 */
export async function findSession(db: Db, token: string, now: number): Promise<SessionUser | undefined> {
  const at = new Date(now);
  const [row]: [SessionUser?] = await db`
    update dashboard_sessions s
    set last_seen_at = ${at},
        expires_at = least(${new Date(
    now + IDLE_MS,
  )}::timestamptz, s.created_at + ${`${ABSOLUTE_MS} milliseconds`}::interval)
    from dashboard_users u join teams t on t.id = u.team_id
    where s.token_hash = ${await hashKey(token)} and u.id = s.user_id and s.expires_at > ${at}
    returning u.id, u.email, u.role, t.id as "teamId", t.name as "teamName", s.csrf_token as csrf`;
  return row;
}

/** Ends one session (sign-out). */
export async function deleteSession(db: Db, token: string): Promise<void> {
  await db`delete from dashboard_sessions where token_hash = ${await hashKey(token)}`;
}

/** Ends every session of a user (sign out everywhere). */
export async function deleteUserSessions(db: Db, userId: string): Promise<void> {
  await db`delete from dashboard_sessions where user_id = ${userId}`;
}

/**
 * Whether the browser reached us over TLS: an https PUBLIC_URL, an https request, or a trusted
 * proxy's `X-Forwarded-Proto: https`.
 */
export function overTls(c: Context, deps: Deps): boolean {
  if (deps.config.PUBLIC_URL?.startsWith("https:") || c.req.url.startsWith("https:")) return true;
  return deps.config.TRUST_PROXY && c.req.header("x-forwarded-proto")?.split(",")[0].trim() === "https";
}

/** The cookie's name: `__Host-` (Secure, this host only, path /) over TLS. */
function cookieName(secure: boolean): string {
  return secure ? "__Host-dashboard_session" : "dashboard_session";
}

/** The session token the browser sent, if any. */
export function sessionToken(c: Context, deps: Deps): string | undefined {
  return getCookie(c, cookieName(overTls(c, deps)));
}

/** Hands the browser its session cookie: HttpOnly, SameSite=Lax, Secure over TLS; it lives as long as the session can. */
export function setSessionCookie(c: Context, deps: Deps, token: string): void {
  const secure = overTls(c, deps);
  setCookie(c, cookieName(secure), token, {
    httpOnly: true,
    sameSite: "Lax",
    secure,
    path: "/",
    maxAge: ABSOLUTE_MS / 1000,
  });
}

/** Tells the browser to forget its session cookie. */
export function clearSessionCookie(c: Context, deps: Deps): void {
  const secure = overTls(c, deps);
  deleteCookie(c, cookieName(secure), { path: "/", secure });
}
