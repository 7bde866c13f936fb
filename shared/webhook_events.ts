/**
 * Events for outbound webhooks: the envelope `{id, type, created_at, data}`, the queue job that
 * delivers it, the team's endpoints subscribed to each type, and the jobs that carry events to them
 * (several deliveries in one queue message). An event is written in the transaction of the change it
 * reports and relayed from there (event_outbox.ts), or enqueued in the unit of work of that change
 * (OTP sessions): never after the commit, where a stop in between would lose it.
 */
import { z } from "zod";
import type { Db } from "./db.ts";
import type { Deps } from "./deps.ts";
import { log } from "./log.ts";
import { TtlCache } from "./ttl_cache.ts";
import { newUlid } from "./sending/ids.ts";
import { metrics } from "./metrics.ts";

/** Every event type an endpoint can subscribe to. */
export const EVENT_TYPES = [
  "message.sent",
  "message.delivered",
  "message.failed",
  "message.read",
  "contact.unsubscribed",
  "trigger.completed",
  "workflow.completed",
  "otp.verified",
  "otp.locked",
  "otp.fraud_blocked",
] as const;

/** One event type. */
export type EventType = typeof EVENT_TYPES[number];

/** The envelope sent to endpoints (the specification's shape). */
export const WebhookEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  created_at: z.string(),
  data: z.record(z.string(), z.unknown()),
});

/** An event as sent. */
export type WebhookEvent = z.infer<typeof WebhookEventSchema>;

/** The queue job type of webhook deliveries. */
export const WEBHOOK_JOB_TYPE = "webhook-deliver";

/** A queue message delivering events to endpoints (one attempt each); retries carry the failed ones again. */
export const WebhookDeliverJob = z.object({
  type: z.literal(WEBHOOK_JOB_TYPE),
  team_id: z.string(),
  /** 1 for the first attempt. */
  attempt: z.number().int().min(1),
  /** Milliseconds since the epoch when the job was due (for queue lag). */
  due_at: z.number().optional(),
  /** How many times this attempt was put off because its endpoint had no free place (see worker/webhooks.ts). */
  deferrals: z.number().int().min(0).optional(),
  deliveries: z.array(z.object({ endpoint_id: z.string(), event: WebhookEventSchema })).min(1),
});

/** A webhook delivery job. */
export type WebhookDeliverJob = z.infer<typeof WebhookDeliverJob>;

/** One delivery: an event for an endpoint. */
export type Delivery = WebhookDeliverJob["deliveries"][number];

/** Largest serialised job we enqueue (Deno KV takes values up to 64 KiB). */
const MAX_JOB_BYTES = 48 * 1024;

/** An active endpoint and the event types it wants (null: all). */
export interface EndpointSubscription {
  id: string;
  events: string[] | null;
}

/**
 * A team's active endpoints, cached 5 s (create, change and delete invalidate at once): concurrent
 * emitters share one query, and the teams kept are bounded.
 */
const cache = new TtlCache<EndpointSubscription[]>(5_000);

/** Forgets the cached endpoints of a team (after its endpoints change). */
export function invalidateEndpointCache(teamId: string): void {
  cache.delete(teamId);
}

function activeEndpoints(db: Db, teamId: string): Promise<EndpointSubscription[]> {
  return cache.get(teamId, Date.now(), async () => {
    const rows: EndpointSubscription[] = await db`
      select id, events from webhook_endpoints where team_id = ${teamId} and is_active`;
    return rows;
  });
}

/** A new event envelope (`evt_` + ulid). */
export function newEvent(type: EventType, data: Record<string, unknown>, now: number): WebhookEvent {
  return { id: `evt_${newUlid(now)}`, type, created_at: new Date(now).toISOString(), data };
}

/** Delivery jobs, each within the queue's message size. */
export interface PackedJobs {
  jobs: WebhookDeliverJob[];
}

/** Splits deliveries into jobs no larger than the KV value limit allows. */
export function packJobs(teamId: string, deliveries: Delivery[], attempt: number, dueAt: number): PackedJobs {
  const jobs: WebhookDeliverJob[] = [];
  let current: Delivery[] = [];
  let size = 0;
  const flush = () => {
    if (current.length > 0) {
      jobs.push({ type: WEBHOOK_JOB_TYPE, team_id: teamId, attempt, due_at: dueAt, deliveries: current });
    }
    current = [];
    size = 0;
  };
  for (const delivery of deliveries) {
    // KV stores values V8-serialised: at most 2 bytes a character, about the size of the JSON text.
    const length = JSON.stringify(delivery).length * 2;
    if (length > MAX_JOB_BYTES) {
      log("error", "webhook event too large to deliver", { event_id: delivery.event.id, type: delivery.event.type });
      continue;
    }
    if (size + length > MAX_JOB_BYTES) flush();
    current.push(delivery);
    size += length;
  }
  flush();
  return { jobs };
}

/**
 * Enqueues delivery jobs, all at once: concurrent enqueues share the queue's group commit (on KV,
 * weighed by size so that a group stays under KV's 800 KiB a commit; on pg-boss, one INSERT).
 */
export async function enqueueDeliveries(deps: Deps, { jobs }: PackedJobs): Promise<void> {
  await Promise.all(jobs.map((job) => deps.queue.enqueue(job)));
}

/** An event as its emitter builds it (its envelope is made when it is staged: see event_outbox.ts). */
export interface EventInput {
  type: EventType;
  data: Record<string, unknown>;
}

/** The endpoints of a team that want events of `type`. */
function subscribed(endpoints: EndpointSubscription[], type: string): EndpointSubscription[] {
  return endpoints.filter((e) => e.events === null || e.events.includes(type));
}

/** The active endpoints of teams (cached 5 s), looked up before a transaction that stages their events. */
export type Listeners = Map<string, EndpointSubscription[]>;

/**
 * The {@linkcode Listeners} of teams. Within a transaction, pass it as `db`: on the embedded
 * Postgres (one connection) a query outside it would wait for it to end.
 */
export async function listenersOf(deps: Deps, teamIds: Iterable<string>, db: Db = deps.sql): Promise<Listeners> {
  const listeners: Listeners = new Map();
  for (const teamId of new Set(teamIds)) listeners.set(teamId, await activeEndpoints(db, teamId));
  return listeners;
}

/** True when some team of `listeners` has an active endpoint. */
export function listening(listeners: Listeners): boolean {
  for (const endpoints of listeners.values()) if (endpoints.length > 0) return true;
  return false;
}

/** True when some active endpoint of the team (as `listeners` knew them) wants events of `type`. */
export function wanted(listeners: Listeners, teamId: string, type: string): boolean {
  return subscribed(listeners.get(teamId) ?? [], type).length > 0;
}

/** The delivery jobs of some events, and the events that go to at least one endpoint. */
export interface EventJobs extends PackedJobs {
  events: WebhookEvent[];
}

/**
 * The jobs delivering a team's events to each of its endpoints (as `listeners` knew them) subscribed
 * to their type: for a caller that enqueues them in the unit of work of the change they report.
 */
export function eventJobs(listeners: Listeners, teamId: string, events: WebhookEvent[], now: number): EventJobs {
  const endpoints = listeners.get(teamId) ?? [];
  const deliveries: Delivery[] = [];
  const wanted: WebhookEvent[] = [];
  for (const event of events) {
    const targets = subscribed(endpoints, event.type);
    if (targets.length === 0) continue;
    wanted.push(event);
    for (const endpoint of targets) deliveries.push({ endpoint_id: endpoint.id, event });
  }
  return { ...packJobs(teamId, deliveries, 1, now), events: wanted };
}

/** Counts events handed to the queue (the `webhook_events_total` metric). */
export function countEmitted(events: WebhookEvent[]): void {
  for (const event of events) metrics.webhookEvents.inc({ type: event.type });
}

/**
 * Enqueues the delivery of a team's events to each of its active endpoints subscribed to their type
 * (sharing the queue's group commit); answers the events that reached at least one endpoint.
 */
export async function enqueueEvents(deps: Deps, teamId: string, events: WebhookEvent[]): Promise<WebhookEvent[]> {
  if (events.length === 0) return [];
  const { events: enqueued, ...packed } = eventJobs(await listenersOf(deps, [teamId]), teamId, events, deps.now());
  await enqueueDeliveries(deps, packed);
  countEmitted(enqueued);
  return enqueued;
}

/** A trigger as `trigger.completed` reports it. */
export interface CompletedTrigger {
  id: string;
  flow_type: string;
  trigger_type: string;
  status: string;
  total_contacts: number;
  sent: number;
  failed: number;
  filtered: number;
  completed_at: Date | number | null;
}

/** The `trigger.completed` event of a trigger that just became final (a direct send's or a workflow's). */
export function triggerCompletedEvent(t: CompletedTrigger): EventInput {
  return {
    type: "trigger.completed",
    data: {
      trigger_id: t.id,
      flow_type: t.flow_type,
      trigger_type: t.trigger_type,
      status: t.status,
      summary: { total_contacts: t.total_contacts, sent: t.sent, failed: t.failed, filtered: t.filtered },
      completed_at: t.completed_at === null ? null : new Date(t.completed_at).toISOString(),
    },
  };
}
