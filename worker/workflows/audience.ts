import type { Db } from "../../shared/db.ts";
import { findSegment } from "../../shared/segments.ts";
import type { WorkflowConditions } from "../../shared/workflows/definitions.ts";
import type { RecipientFilter } from "../jobs.ts";

/**
 * Who a start of a workflow may reach: the contacts carrying every tag of the start (`tags`) and of
 * the workflow's conditions, within the conditions' segment. Undefined when the segment does not
 * exist (the start reaches no one).
 */
export async function audienceFilter(
  db: Db,
  teamId: string,
  conditions: WorkflowConditions,
  tags: string[] = [],
): Promise<RecipientFilter | undefined> {
  const tagsAll = [...new Set([...tags, ...conditions.tags ?? []])];
  const filter: RecipientFilter = tagsAll.length > 0 ? { tags_all: tagsAll } : {};
  if (conditions.segment_id === undefined) return filter;
  const segment = await findSegment(db, teamId, conditions.segment_id);
  if (!segment) return undefined;
  const f = segment.filter ?? {};
  const all = [...new Set([...tagsAll, ...f.tags_all ?? []])];
  return {
    ...(all.length > 0 ? { tags_all: all } : {}),
    ...(f.tags_any?.length ? { tags_any: f.tags_any } : {}),
    ...(f.is_active === undefined ? {} : { is_active: f.is_active }),
  };
}

/** Those of the team's contacts `ids` that match `filter`. */
export async function matchingContacts(db: Db, teamId: string, filter: RecipientFilter, ids: string[]) {
  if (ids.length === 0) return [];
  const rows = await db<{ id: string }[]>`
    select id from contacts
    where team_id = ${teamId} and id = any(${ids}::uuid[])
      ${filter.tags_all?.length ? db`and tags @> ${filter.tags_all}::text[]` : db``}
      ${filter.tags_any?.length ? db`and tags && ${filter.tags_any}::text[]` : db``}
      ${filter.is_active === undefined ? db`` : db`and is_active = ${filter.is_active}`}`;
  return rows.map((r) => r.id);
}
