import { hashKey } from "../../shared/api_keys.ts";
import type { DashboardRole } from "../../shared/dashboard_users.ts";
import type { Db, Sql } from "../../shared/db.ts";
import { hashPassword } from "../../shared/passwords.ts";

/**
 * How the page names a session: the first 16 hex digits of its token's hash. Not the token, nor
 * enough to find one; a sign-out by it is limited to the user's own sessions.
 */
const SESSION_ID_LENGTH = 16;

/** A live session of a user, as the account page lists it. */
export interface SessionRow {
  id: string;
  user_agent: string | null;
  created_at: Date;
  last_seen_at: Date;
  /** The session of the request that asks. */
  current: boolean;
}

/** The user's live sessions, the most recently seen first. */
export async function listUserSessions(
  db: Db,
  userId: string,
  currentToken: string,
  now: number,
): Promise<SessionRow[]> {
  const current = await hashKey(currentToken);
  const rows = await db<(Omit<SessionRow, "current"> & { token_hash: string })[]>`
    select token_hash, user_agent, created_at, last_seen_at from dashboard_sessions
    where user_id = ${userId} and expires_at > ${new Date(now)}
    order by last_seen_at desc, created_at desc`;
  return rows.map(({ token_hash, ...r }) => ({
    ...r,
    id: token_hash.slice(0, SESSION_ID_LENGTH),
    current: token_hash === current,
  }));
}

/** Ends the user's session named `id` (listUserSessions); whether there was one. */
export async function deleteUserSession(db: Db, userId: string, id: string): Promise<boolean> {
  if (!/^[0-9a-f]+$/.test(id) || id.length !== SESSION_ID_LENGTH) return false;
  const rows = await db`
    delete from dashboard_sessions
    where user_id = ${userId} and left(token_hash, ${SESSION_ID_LENGTH}) = ${id}
    returning user_id`;
  return rows.length > 0;
}

/** The user's password hash (for the current-password check). */
export async function passwordHashOf(db: Db, userId: string): Promise<string | undefined> {
  const [row]: [{ password_hash: string }?] = await db`select password_hash from dashboard_users where id = ${userId}`;
  return row?.password_hash;
}

/**
 * Sets a new password and ends the user's other sessions (whoever knew the old password may hold
 * one); the session that changed it stays signed in.
 */
export async function changePassword(sql: Sql, userId: string, password: string, keepToken: string): Promise<void> {
  const hash = await hashPassword(password);
  const keep = await hashKey(keepToken);
  await sql.begin(async (tx) => {
    await tx`update dashboard_users set password_hash = ${hash} where id = ${userId}`;
    await tx`delete from dashboard_sessions where user_id = ${userId} and token_hash <> ${keep}`;
  });
}

/** Why a change of the team's people was refused; undefined when it was made. */
export type PeopleRefusal = "not_found" | "last_owner";

/**
 * Runs `change` on the team's user `userId` unless it would leave the team without an owner. The
 * team's owners are locked first, so that two owners demoting or removing each other at once cannot
 * both succeed.
 */
async function withOwnersLocked(
  sql: Sql,
  teamId: string,
  userId: string,
  leavesOwner: (user: { role: DashboardRole }) => boolean,
  change: (tx: Db) => Promise<void>,
): Promise<PeopleRefusal | undefined> {
  return await sql.begin(async (tx) => {
    const owners = await tx<{ id: string }[]>`
      select id from dashboard_users where team_id = ${teamId} and role = 'owner' order by id for update`;
    const [user]: [{ role: DashboardRole }?] = await tx`
      select role from dashboard_users where id = ${userId} and team_id = ${teamId} for update`;
    if (!user) return "not_found" as const;
    const otherOwners = owners.filter((o) => o.id !== userId).length;
    if (!leavesOwner(user) && otherOwners === 0) return "last_owner" as const;
    await change(tx);
    return undefined;
  });
}

/** Removes a user of the team (their sessions go with them: on delete cascade). */
export function removeTeamUser(sql: Sql, teamId: string, userId: string): Promise<PeopleRefusal | undefined> {
  return withOwnersLocked(sql, teamId, userId, (u) => u.role !== "owner", async (tx) => {
    await tx`delete from dashboard_users where id = ${userId} and team_id = ${teamId}`;
  });
}

/** Gives a user of the team another role (it applies from their next request: sessions read it live). */
export function setTeamUserRole(
  sql: Sql,
  teamId: string,
  userId: string,
  role: DashboardRole,
): Promise<PeopleRefusal | undefined> {
  return withOwnersLocked(sql, teamId, userId, (u) => u.role !== "owner" || role === "owner", async (tx) => {
    await tx`update dashboard_users set role = ${role} where id = ${userId} and team_id = ${teamId}`;
  });
}
