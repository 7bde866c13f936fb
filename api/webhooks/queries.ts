import type { Db } from "../../shared/db.ts";
import type { WebhookEvent } from "../../shared/webhook_events.ts";
import { newWebhookSecret } from "../../shared/webhook_signing.ts";

/** How long the secret before a rotation keeps signing beside the new one. */
export const ROTATION_GRACE_MS = 24 * 60 * 60 * 1000;

/** A webhook endpoint as stored. */
export interface EndpointRow {
  id: string;
  team_id: string;
  url: string;
  events: string[] | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  is_active: boolean;
  disabled_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A delivery attempt as stored. */
export interface AttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  attempt: number;
  status: "succeeded" | "failed";
  response_status: number | null;
  error: string | null;
  latency_ms: number;
  next_retry_at: Date | null;
  created_at: Date;
}

/** Registers an endpoint. */
export async function createEndpoint(
  db: Db,
  teamId: string,
  input: { url: string; events: string[] | null; secret: string },
): Promise<EndpointRow> {
  const [row]: [EndpointRow] = await db`
    insert into webhook_endpoints ${db({ team_id: teamId, ...input })} returning *`;
  return row;
}

/** How many endpoints the team has. */
export async function countEndpoints(db: Db, teamId: string): Promise<number> {
  const [row]: [{ count: number }] =
    await db`select count(*)::int as count from webhook_endpoints where team_id = ${teamId}`;
  return row.count;
}

/** The team's endpoints, newest first. */
export async function listEndpoints(db: Db, teamId: string): Promise<EndpointRow[]> {
  return await db<EndpointRow[]>`
    select * from webhook_endpoints where team_id = ${teamId} order by created_at desc, id desc`;
}

/** The team's endpoint with this id (the id is a UUID: callers check). */
export async function findEndpoint(db: Db, teamId: string, id: string): Promise<EndpointRow | undefined> {
  const [row]: [EndpointRow?] = await db`select * from webhook_endpoints where team_id = ${teamId} and id = ${id}`;
  return row;
}

/** Deletes the endpoint (and its attempts); its id, or undefined when there is none. */
export async function deleteEndpoint(db: Db, teamId: string, id: string): Promise<string | undefined> {
  const [row]: [{ id: string }?] = await db`
    delete from webhook_endpoints where team_id = ${teamId} and id = ${id} returning id`;
  return row?.id;
}

/** Replaces the secret; the old one keeps signing beside it until `graceUntil`. */
export async function rotateSecret(
  db: Db,
  teamId: string,
  id: string,
  secret: string,
  graceUntil: Date,
): Promise<EndpointRow | undefined> {
  const [row]: [EndpointRow?] = await db`
    update webhook_endpoints
    set previous_secret = secret, previous_secret_expires_at = ${graceUntil}, secret = ${secret}, updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning *`;
  return row;
}

/**
 * Gives the endpoint a new secret, the old one signing beside it for ROTATION_GRACE_MS (the API's
 * rotate-secret and the dashboard's both come here); undefined when the team has no such endpoint.
 */
export async function rotateEndpointSecret(
  db: Db,
  teamId: string,
  id: string,
  now: number,
): Promise<EndpointRow | undefined> {
  return await rotateSecret(db, teamId, id, newWebhookSecret(), new Date(now + ROTATION_GRACE_MS));
}

/** What an update may change. */
export interface EndpointChanges {
  url?: string;
  /** null: every event type. */
  events?: string[] | null;
  is_active?: boolean;
}

/** Changes the given fields; re-enabling clears the reason it was disabled. */
export async function updateEndpoint(
  db: Db,
  teamId: string,
  id: string,
  changes: EndpointChanges,
): Promise<EndpointRow | undefined> {
  const [row]: [EndpointRow?] = await db`
    update webhook_endpoints set
      url = coalesce(${changes.url ?? null}, url),
      events = case when ${changes.events !== undefined} then ${changes.events ?? null}::text[] else events end,
      is_active = coalesce(${changes.is_active ?? null}, is_active),
      disabled_reason = case when ${changes.is_active === true} then null else disabled_reason end,
      updated_at = now()
    where team_id = ${teamId} and id = ${id}
    returning *`;
  return row;
}

/** The endpoint's attempts, newest first, after the cursor (an attempt id). */
export async function listAttempts(
  db: Db,
  endpointId: string,
  options: { limit: number; startingAfter?: string },
): Promise<{ rows: AttemptRow[]; hasMore: boolean }> {
  const rows = await db<AttemptRow[]>`
    select id, endpoint_id, event_id, event_type, attempt, status, response_status, error, latency_ms,
      next_retry_at, created_at
    from webhook_attempts
    where endpoint_id = ${endpointId} ${options.startingAfter ? db`and id < ${options.startingAfter}` : db``}
    order by id desc
    limit ${options.limit + 1}`;
  return { rows: rows.slice(0, options.limit), hasMore: rows.length > options.limit };
}

/** Of these events, the ones delivered to the endpoint (a later attempt succeeded). */
export async function deliveredEvents(db: Db, endpointId: string, eventIds: string[]): Promise<Set<string>> {
  const rows = await db<{ event_id: string }[]>`
    select distinct event_id from webhook_attempts
    where status = 'succeeded' and endpoint_id = ${endpointId} and event_id = any(${eventIds}::text[])`;
  return new Set(rows.map((r) => r.event_id));
}

/** A failed attempt of the team's endpoint, with the event it carried (null before that was kept). */
export interface FailedAttempt {
  id: string;
  endpoint_id: string;
  event_id: string;
  event: WebhookEvent | null;
  /** 1 for the first attempt. */
  attempt: number;
}

/** The team's failed attempt `id` at endpoint `endpointId`; undefined when there is none. */
export async function findFailedAttempt(
  db: Db,
  teamId: string,
  endpointId: string,
  id: string,
): Promise<FailedAttempt | undefined> {
  const [row]: [FailedAttempt?] = await db`
    select id, endpoint_id, event_id, event, attempt from webhook_attempts
    where id = ${id} and team_id = ${teamId} and endpoint_id = ${endpointId} and status = 'failed'`;
  return row;
}
