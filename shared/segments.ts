import { asJson, type Db } from "./db.ts";

/** Who a segment holds: every condition given must hold (tags as in the contact filters). */
export interface SegmentFilter {
  /** The contact carries every one of these tags (`tags @> ARRAY[...]`). */
  tags_all?: string[];
  /** The contact carries at least one of these tags (`tags && ARRAY[...]`). */
  tags_any?: string[];
  /** The contact's `is_active` equals this. */
  is_active?: boolean;
}

/** A named, stored contact filter of a team. */
export interface Segment {
  id: string;
  team_id: string;
  name: string;
  filter: SegmentFilter;
  created_at: Date;
  updated_at: Date;
}

/** The fields a segment upsert sets. */
export interface SegmentInput {
  name: string;
  filter: SegmentFilter;
}

/** Creates or replaces the team's segment `id`. */
export async function upsertSegment(db: Db, teamId: string, id: string, input: SegmentInput): Promise<Segment> {
  const row = { team_id: teamId, id, name: input.name, filter: asJson(input.filter) };
  const [segment]: [Segment] = await db`
    insert into segments ${db(row)}
    on conflict (team_id, id) do update set name = excluded.name, filter = excluded.filter, updated_at = now()
    returning id, team_id, name, filter, created_at, updated_at`;
  return segment;
}

/** The team's segment `id`, if there is one. */
export async function findSegment(db: Db, teamId: string, id: string): Promise<Segment | undefined> {
  const [segment]: [Segment?] = await db`
    select id, team_id, name, filter, created_at, updated_at from segments where team_id = ${teamId} and id = ${id}`;
  return segment;
}
