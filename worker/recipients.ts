import type postgres from "postgres";
import type { Config } from "../shared/config.ts";
import type { Db, Sql } from "../shared/db.ts";
import type { Preferences } from "../shared/contacts/queries.ts";
import { tokenIn } from "../shared/contacts/device_tokens.ts";
import { findSegment } from "../shared/segments.ts";
import type { Channel } from "../shared/providers/types.ts";
import type { Recipient } from "../shared/sending/spec.ts";
import type { RecipientFilter } from "./jobs.ts";

/** What delivery needs of a contact. */
export interface RecipientContact {
  id: string;
  external_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  is_active: boolean;
  is_unsubscribed: boolean;
  preferences: Preferences;
  /** `custom_fields.phone` as text, when set. */
  phone: string | null;
  /** `custom_fields.timezone` (IANA) as text, when set: the zone of the contact's quiet hours. */
  timezone?: string | null;
}

/** A push device of a contact. */
export interface Device {
  token: string;
  platform: "android" | "ios" | "web";
  provider: "fcm" | "apns";
}

/**
 * Contacts a page of a fan-out holds: FANOUT_PAGE_SIZE, else 2,000 on the embedded Postgres and
 * 1,000 on a server. Each page costs about ten statements and a few KV operations whatever its size,
 * and PGlite pays dearly for each statement, so larger pages make its fan-out faster. On a server
 * pages past 1,000 gained no speed and cost memory, so it keeps the smaller page (measure a size with
 * `deno task bench --only=fan-out --env=FANOUT_PAGE_SIZE=…`).
 */
export function pageSize(config: Config): number {
  if (config.FANOUT_PAGE_SIZE > 0) return config.FANOUT_PAGE_SIZE;
  return config.DATABASE_URL ? 1_000 : 2_000;
}

/** The filter a fan-out recipient type stands for; undefined when the segment does not exist. */
export async function recipientFilter(
  db: Db,
  teamId: string,
  recipient: Recipient,
): Promise<RecipientFilter | undefined> {
  switch (recipient.type) {
    case "tag":
      return { tags_all: recipient.tags };
    case "segment": {
      const segment = await findSegment(db, teamId, recipient.segment_id);
      if (!segment) return undefined;
      const f = segment.filter ?? {};
      return { tags_all: f.tags_all, tags_any: f.tags_any, is_active: f.is_active };
    }
    case "all":
      return {};
    default:
      throw new Error(`Cannot page recipients of a ${recipient.type} send`);
  }
}

function matches(db: Db, teamId: string, filter: RecipientFilter): postgres.Fragment {
  return db`team_id = ${teamId}
    ${filter.tags_all?.length ? db`and tags @> ${filter.tags_all}::text[]` : db``}
    ${filter.tags_any?.length ? db`and tags && ${filter.tags_any}::text[]` : db``}
    ${filter.is_active === undefined ? db`` : db`and is_active = ${filter.is_active}`}`;
}

/**
 * Ids of the next page of matching contacts after `after` (keyset on id). The scan is pinned to the
 * (team_id, id) index, walked in order: with stale statistics (PGlite never analyzes by itself) the
 * planner would otherwise gather and sort every remaining match for each page.
 */
export async function nextPageIds(
  sql: Sql,
  teamId: string,
  filter: RecipientFilter,
  after: string | null,
  limit: number,
): Promise<string[]> {
  return await sql.begin(async (tx) => {
    await tx`set local enable_bitmapscan = off`;
    await tx`set local enable_sort = off`;
    const rows = await tx<{ id: string }[]>`
      select id from contacts
      where ${matches(tx, teamId, filter)} ${after === null ? tx`` : tx`and id > ${after}::uuid`}
      order by id limit ${limit}`;
    return rows.map((r) => r.id);
  });
}

/** Only the channel's preferences are read (parsing every contact's whole preferences object is not free). */
const COLUMNS = (db: Db, channel: Channel) =>
  db`id, external_id, email, first_name, last_name, is_active, is_unsubscribed,
    jsonb_build_object(${channel}::text, preferences->${channel}::text) as preferences, custom_fields->>'phone' as phone,
    custom_fields->>'timezone' as timezone`;

/** The matching contacts with `after` < id <= `until`. */
export async function contactsInRange(
  db: Db,
  channel: Channel,
  teamId: string,
  filter: RecipientFilter,
  after: string | null,
  until: string,
): Promise<RecipientContact[]> {
  return await db<RecipientContact[]>`
    select ${COLUMNS(db, channel)} from contacts
    where ${matches(db, teamId, filter)} ${after === null ? db`` : db`and id > ${after}::uuid`}
      and id <= ${until}::uuid
    order by id`;
}

/** The team's contacts with these ids. */
export async function contactsByIds(db: Db, teamId: string, ids: string[]): Promise<RecipientContact[]> {
  if (ids.length === 0) return [];
  return await db<RecipientContact[]>`
    select id, external_id, email, first_name, last_name, is_active, is_unsubscribed, preferences,
      custom_fields->>'phone' as phone, custom_fields->>'timezone' as timezone
    from contacts where team_id = ${teamId} and id = any(${ids}::uuid[])`;
}

/** The push devices of these contacts, by contact id. */
export async function devicesOf(db: Db, contactIds: string[]): Promise<Map<string, Device[]>> {
  const out = new Map<string, Device[]>();
  if (contactIds.length === 0) return out;
  const rows = await db<(Device & { contact_id: string })[]>`
    select contact_id, token, platform, provider from device_tokens
    where contact_id = any(${contactIds}::uuid[]) order by created_at, token`;
  for (const r of rows) {
    const list = out.get(r.contact_id) ?? [];
    list.push({ token: r.token, platform: r.platform, provider: r.provider });
    out.set(r.contact_id, list);
  }
  return out;
}

/** Removes a push token the provider called invalid or unregistered. */
export async function deleteDeviceTokens(db: Db, teamId: string, tokens: string[]): Promise<void> {
  if (tokens.length === 0) return;
  await db`delete from device_tokens where team_id = ${teamId} and ${tokenIn(db, tokens)}`;
}
