/**
 * The outbox of webhook events (migration 012). An event that reports a change recorded in Postgres
 * (a message sent or failed, a provider's report on it, a contact unsubscribed, a trigger or a
 * workflow execution completed) is written in the transaction of that change (`stageEvents`), and
 * handed to the queue once the transaction commits (`relayEvents`), which deletes its row. A process that stops between the commit and the hand-over leaves the row, and the
 * worker's sweep (`sweepEventOutbox`) hands it over later: the event comes late, with the same id,
 * and is never lost. Emitted after the commit instead, it was lost by a stop in between. (OTP events
 * report a change in the engine's hot state: they are enqueued in its unit of work, see otp/verify.ts.)
 *
 * Only events some active endpoint of the team subscribes to are written, so a team without
 * webhooks pays nothing. An event can reach the queue twice (a stop after the hand-over and before
 * the delete; a sweep beside a slow relay): it is the same envelope, the webhook worker skips an
 * (event, endpoint) that succeeded, and receivers drop a repeated `webhook-id`.
 */
import type { Db } from "./db.ts";
import type { Deps } from "./deps.ts";
import { log } from "./log.ts";
import {
  enqueueEvents,
  type EventInput,
  type EventType,
  type Listeners,
  listenersOf,
  newEvent,
  wanted,
  type WebhookEvent,
} from "./webhook_events.ts";

/** An event of a team, as its emitter builds it. */
export type TeamEvent = EventInput & { team_id: string };

/** An event written to the outbox, to relay once its transaction commits. */
export interface StagedEvent {
  team_id: string;
  event: WebhookEvent;
}

/** How old an event must be before the sweep relays it: its own process had that long to. */
export const EVENT_SWEEP_AGE_MS = 30_000;

/** How often the worker sweeps the outbox. */
export const EVENT_SWEEP_EVERY_MS = 10_000;

/** How many events the sweep relays at a time. */
const SWEEP_PAGE = 500;

/**
 * Writes the events some endpoint wants (as `listeners`, read before the transaction, knew them)
 * into the outbox in one INSERT within `tx`, the transaction of the change they report. Answers
 * them, for {@linkcode relayEvents} once `tx` commits.
 */
export async function stageEvents(
  tx: Db,
  listeners: Listeners,
  inputs: TeamEvent[],
  now: number,
): Promise<StagedEvent[]> {
  const staged = inputs
    .filter((e) => wanted(listeners, e.team_id, e.type))
    .map((e) => ({ team_id: e.team_id, event: newEvent(e.type, e.data, now) }));
  if (staged.length === 0) return [];
  const column = <T>(f: (s: StagedEvent) => T) => staged.map(f);
  await tx`
    insert into webhook_event_outbox (id, team_id, type, data, created_at)
    select id, team_id, type, data::json, created_at
    from unnest(${column((s) => s.event.id)}::text[], ${column((s) => s.team_id)}::uuid[],
      ${column((s) => s.event.type)}::text[], ${column((s) => JSON.stringify(s.event.data))}::text[],
      ${column((s) => s.event.created_at)}::timestamptz[])
      as v(id, team_id, type, data, created_at)`;
  return staged;
}

/**
 * Runs `change` and stages the events it reports (`eventsOf` its result) in the same transaction,
 * adding them to `staged` for the caller to relay; a team none of whose endpoints wants
 * `report.type` (as `listeners`, read before, knew them) gets no transaction.
 */
export async function changeAndStage<T>(
  deps: Deps,
  listeners: Listeners,
  report: { team_id: string; type: EventType },
  change: (db: Db) => Promise<T>,
  eventsOf: (result: T) => TeamEvent[],
  staged: StagedEvent[],
): Promise<T> {
  if (!wanted(listeners, report.team_id, report.type)) return await change(deps.sql);
  const { result, events } = await deps.sql.begin(async (tx) => {
    const result = await change(tx);
    return { result, events: await stageEvents(tx, listeners, eventsOf(result), deps.now()) };
  });
  staged.push(...events);
  return result;
}

/**
 * Makes `change` in a transaction that also stages the events it reports (`eventsOf` its result,
 * which may write more in `tx`), then relays them; answers the change's result. The teams' endpoints
 * are read within the transaction, and only when there are events.
 */
export async function changeAndReport<T>(
  deps: Deps,
  change: (tx: Db) => Promise<T>,
  eventsOf: (result: T, tx: Db) => TeamEvent[] | Promise<TeamEvent[]>,
): Promise<T> {
  const { result, staged } = await deps.sql.begin(async (tx) => {
    const result = await change(tx);
    const events = await eventsOf(result, tx);
    if (events.length === 0) return { result, staged: [] };
    const listeners = await listenersOf(deps, events.map((e) => e.team_id), tx);
    return { result, staged: await stageEvents(tx, listeners, events, deps.now()) };
  });
  await relayEvents(deps, staged);
  return result;
}

/**
 * Hands staged events to the queue (their jobs share its group commit), then deletes their rows; answers how many
 * it handed over. Never throws: webhooks are a notification, and what this leaves the sweep relays.
 */
export async function relayEvents(deps: Deps, staged: StagedEvent[]): Promise<number> {
  if (staged.length === 0) return 0;
  const byTeam = new Map<string, WebhookEvent[]>();
  for (const s of staged) {
    const events = byTeam.get(s.team_id);
    if (events) events.push(s.event);
    else byTeam.set(s.team_id, [s.event]);
  }
  const relayed: string[] = [];
  for (const [teamId, events] of byTeam) {
    try {
      await enqueueEvents(deps, teamId, events);
      relayed.push(...events.map((e) => e.id));
    } catch (err) {
      log("error", "cannot emit webhook events", { team_id: teamId, error: String(err) });
    }
  }
  if (relayed.length === 0) return 0;
  try {
    await deps.sql`delete from webhook_event_outbox where id = any(${relayed}::text[])`;
  } catch (err) {
    // Relayed again by the sweep: the same envelopes, which receivers drop as repeats.
    log("warn", "cannot clear relayed webhook events", { error: String(err) });
  }
  return relayed.length;
}

/**
 * Relays the events left in the outbox for `minAgeMs` or more (their process stopped before it
 * relayed them), oldest first. Answers how many it relayed.
 */
export async function sweepEventOutbox(deps: Deps, minAgeMs = EVENT_SWEEP_AGE_MS): Promise<number> {
  const total = await sweep(deps, new Date(deps.now() - minAgeMs));
  if (total > 0) log("warn", SWEPT_MESSAGE, { events: total });
  return total;
}

/** What the sweep logs when it relayed events (a process stopped before it relayed them). */
export const SWEPT_MESSAGE = "webhook events relayed late: their process stopped before it relayed them";

async function sweep(deps: Deps, cutoff: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await deps.sql<{ id: string; team_id: string; type: string; data: unknown; created_at: Date }[]>`
      select id, team_id, type, data, created_at from webhook_event_outbox
      where created_at <= ${cutoff} order by created_at, id limit ${SWEEP_PAGE}`;
    if (rows.length === 0) return total;
    const relayed = await relayEvents(
      deps,
      rows.map((r) => ({
        team_id: r.team_id,
        event: {
          id: r.id,
          type: r.type,
          created_at: r.created_at.toISOString(),
          data: r.data as Record<string, unknown>,
        },
      })),
    );
    total += relayed;
    // A page it could not hand over waits for the next sweep.
    if (relayed < rows.length || rows.length < SWEEP_PAGE) return total;
  }
}
