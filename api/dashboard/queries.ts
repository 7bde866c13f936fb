import type { KeyKind } from "../../shared/api_keys.ts";
import type { Db } from "../../shared/db.ts";
import type { DashboardUser } from "../../shared/dashboard_users.ts";

/** The account an email signs in to, with its password hash; undefined when none. */
export async function findUserByEmail(
  db: Db,
  email: string,
): Promise<{ id: string; password_hash: string } | undefined> {
  const [row]: [{ id: string; password_hash: string }?] = await db`
    select id, password_hash from dashboard_users where lower(email) = lower(${email})`;
  return row;
}

/** A team's dashboard users, owners first, then by email. */
export async function listTeamUsers(db: Db, teamId: string): Promise<DashboardUser[]> {
  return await db<DashboardUser[]>`
    select id, email, role, team_id, created_at from dashboard_users
    where team_id = ${teamId}
    order by role = 'owner' desc, lower(email)`;
}

/** An API key as its team's dashboard lists it (never the key, which is not stored). */
export interface KeyRow {
  prefix: string;
  kind: KeyKind;
  created_at: Date;
  last_used_at: Date | null;
}

/** A team's keys that still work, newest first. */
export async function listTeamKeys(db: Db, teamId: string): Promise<KeyRow[]> {
  return await db<KeyRow[]>`
    select prefix, kind, created_at, last_used_at from api_keys
    where team_id = ${teamId} and revoked_at is null
    order by created_at desc, prefix`;
}

/** Revokes a key of this team only; whether one was revoked. */
export async function revokeTeamKey(db: Db, teamId: string, prefix: string): Promise<boolean> {
  const rows = await db`
    update api_keys set revoked_at = now()
    where team_id = ${teamId} and prefix = ${prefix} and revoked_at is null
    returning id`;
  return rows.length > 0;
}
