import type { Db, Sql } from "../../shared/db.ts";
import type { Team } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import type { OutboxRow } from "../../shared/providers/outbox.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The team `id`, or 404 'Team not found' (a malformed id included). */
export async function requireTeam(db: Db, id: string): Promise<Team> {
  if (!UUID.test(id)) throw new NotFoundError("Team not found", "team_not_found");
  const [team]: [Team?] = await db`select id, name, plan from teams where id = ${id}`;
  if (!team) throw new NotFoundError("Team not found", "team_not_found");
  return team;
}

/** A team as the admin listing shows it, with its keys (prefix and kind only: keys are kept as hashes). */
export interface ListedTeam {
  id: string;
  name: string;
  plan: Team["plan"];
  created_at: Date;
  keys: { prefix: string; kind: string; created_at: Date; revoked_at: Date | null }[];
}

/** A page of teams, oldest first, each with its keys (newest first); and how many teams there are. */
export async function listTeams(db: Db, page: number, limit: number): Promise<{ teams: ListedTeam[]; total: number }> {
  const teams = await db<ListedTeam[]>`
    select t.id, t.name, t.plan, t.created_at,
      coalesce((select json_agg(json_build_object('prefix', k.prefix, 'kind', k.kind, 'created_at', k.created_at,
        'revoked_at', k.revoked_at) order by k.created_at desc, k.prefix) from api_keys k where k.team_id = t.id),
        '[]') as keys
    from teams t order by t.created_at, t.id limit ${limit} offset ${(page - 1) * limit}`;
  const [{ total }]: [{ total: number }] = await db`select count(*)::int as total from teams`;
  // json_agg writes times in the session's format: read back as dates, answered as ISO 8601 UTC.
  const date = (value: unknown) => value === null ? null : new Date(value as string);
  for (const team of teams) {
    team.keys = team.keys.map((k) => ({ ...k, created_at: date(k.created_at)!, revoked_at: date(k.revoked_at) }));
  }
  return { teams, total };
}

/** The currency of the team's wallet. */
export async function walletCurrency(db: Db, teamId: string): Promise<string> {
  const [row]: [{ currency: string }?] = await db`select currency from wallets where team_id = ${teamId}`;
  return row?.currency ?? "USD";
}

/** Which outbox messages a read or a clear applies to (every given filter must match). */
export interface OutboxFilter {
  to?: string;
  channel?: string;
  team_id?: string;
}

function outboxWhere(db: Db, f: OutboxFilter) {
  return db`
    where true
    ${f.to === undefined ? db`` : db`and md5(to_address) = md5(${f.to}) and to_address = ${f.to}`}
    ${f.channel === undefined ? db`` : db`and channel = ${f.channel}`}
    ${f.team_id === undefined ? db`` : db`and team_id = ${f.team_id}`}`;
}

/** Outbox messages, newest first. */
export async function listOutbox(db: Db, filter: OutboxFilter, limit: number): Promise<OutboxRow[]> {
  return await db<OutboxRow[]>`
    select id, team_id, channel, to_address, subject, body, trigger_id, created_at from outbox_all
    ${outboxWhere(db, filter)}
    order by created_at desc, id desc limit ${limit}`;
}

/**
 * Clears outbox messages; returns how many. The copies kept apart are deleted; a message row leaves
 * the outbox and drops its copy, and stays in the message history (see migration 011).
 */
export async function clearOutbox(db: Sql, filter: OutboxFilter): Promise<number> {
  return await db.begin(async (tx: Db) => {
    const apart = await tx`delete from outbox ${outboxWhere(tx, filter)}`;
    const kept = await tx`
      update messages set in_outbox = false, outbox_subject = null, outbox_body = null
      ${outboxWhere(tx, filter)} and in_outbox`;
    return apart.count + kept.count;
  });
}
