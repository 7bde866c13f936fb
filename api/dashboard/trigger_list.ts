import type { Db } from "../../shared/db.ts";
import type { Counts } from "../../shared/sending/trigger_record.ts";
import type { TriggerView } from "../triggers/tracking.ts";

/** A trigger as the sends list shows it: its Postgres row (a running fan-out's live counts are on its page). */
export type TriggerListRow = Pick<TriggerView, "id" | "flow_type" | "trigger_type" | "status" | "created_at"> & Counts;

/** Where a page of triggers starts: after this (created_at, id), newest first. */
export interface TriggerCursor {
  createdAt: Date;
  id: string;
}

const CURSOR = /^(\d{1,15})_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** The cursor of the page after `row`, as the query string carries it. */
export function triggerCursor(row: TriggerListRow): string {
  return `${row.created_at.getTime()}_${row.id}`;
}

/** A cursor from the query string; undefined (the first page) when absent or malformed. */
export function parseTriggerCursor(value: string | undefined): TriggerCursor | undefined {
  const match = value ? CURSOR.exec(value) : null;
  return match ? { createdAt: new Date(Number(match[1])), id: match[2] } : undefined;
}

/**
 * A keyset page of the team's triggers, newest first (on the index triggers_team_created), and
 * whether older ones follow.
 */
export async function listTeamTriggers(
  db: Db,
  teamId: string,
  options: { limit: number; after?: TriggerCursor },
): Promise<{ rows: TriggerListRow[]; hasMore: boolean }> {
  const { after } = options;
  const rows = await db<TriggerListRow[]>`
    select id, flow_type, trigger_type, status, total_contacts, sent, failed, filtered, created_at
    from triggers
    where team_id = ${teamId} ${after ? db`and (created_at, id) < (${after.createdAt}, ${after.id}::uuid)` : db``}
    order by created_at desc, id desc
    limit ${options.limit + 1}`;
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}
