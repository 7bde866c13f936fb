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
