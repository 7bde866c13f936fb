/**
 * The crash test's webhook endpoint: a receiver on loopback that keeps, for each event type it
 * watches, the ids of the events received about each object (a trigger, a workflow execution, a
 * failed message). At the end, every such object must have been reported, each under exactly one
 * event id (a repeated delivery of one event is allowed; two events about one object are not), and
 * nothing may be left in the event outbox.
 */
import type { Db } from "../../shared/db.ts";
import { delay } from "./service.ts";
import type { Scenario } from "./scenario.ts";

/** The event types the endpoint subscribes to, and the field naming the object each reports. */
export const WATCHED = {
  "trigger.completed": "trigger_id",
  "workflow.completed": "execution_id",
  "message.failed": "message_id",
} as const;

type Watched = keyof typeof WATCHED;

/** A loopback endpoint collecting the watched events. */
export class WebhookReceiver {
  /** Per type: the ids of the events received about each object. */
  readonly events = new Map<string, Map<string, Set<string>>>();
  #lastAt = Date.now();
  #server: Deno.HttpServer<Deno.NetAddr>;

  constructor() {
    this.#server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
      const event = JSON.parse(await req.text()) as { id: string; type: string; data: Record<string, unknown> };
      const field = WATCHED[event.type as Watched];
      if (field) {
        const byObject = this.events.get(event.type) ?? new Map<string, Set<string>>();
        const key = String(event.data[field]);
        byObject.set(key, (byObject.get(key) ?? new Set()).add(event.id));
        this.events.set(event.type, byObject);
      }
      this.#lastAt = Date.now();
      return new Response("ok");
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.#server.addr.port}/crash-hooks`;
  }

  /** Waits `atLeastMs`, then until nothing has arrived for 2 s (60 s at most). */
  async settle(atLeastMs: number): Promise<void> {
    await delay(Math.max(0, atLeastMs));
    const deadline = Date.now() + 60_000;
    while (Date.now() - this.#lastAt < 2_000 && Date.now() < deadline) await delay(250);
  }

  close(): Promise<void> {
    return this.#server.shutdown();
  }
}

/** Checks the events received against the stored data (the service stopped). */
export async function checkWebhooks(db: Db, s: Scenario, receiver: WebhookReceiver): Promise<string[]> {
  const executions = await db<{ id: string }[]>`
    select id from workflow_executions where trigger_id = ${s.triggers.workflow}`;
  const failed = await db<{ id: string }[]>`
    select id from messages where team_id = ${s.teamId} and status = 'failed'`;
  const expected: Record<Watched, string[]> = {
    "trigger.completed": [...Object.values(s.triggers), ...s.direct],
    "workflow.completed": executions.map((e) => e.id),
    "message.failed": failed.map((m) => m.id),
  };
  const problems: string[] = [];
  for (const [type, keys] of Object.entries(expected)) {
    const received = receiver.events.get(type) ?? new Map<string, Set<string>>();
    const missing = keys.filter((k) => !received.has(k));
    if (missing.length > 0) problems.push(`webhooks: ${missing.length} of ${keys.length} ${type} never arrived`);
    const twice = [...received.values()].filter((ids) => ids.size > 1).length;
    if (twice > 0) problems.push(`webhooks: ${twice} objects reported by two different ${type} events`);
    const known = new Set(keys);
    const unknown = [...received.keys()].filter((k) => !known.has(k)).length;
    if (unknown > 0) problems.push(`webhooks: ${unknown} ${type} events about objects that are not in the run`);
  }
  const [left]: [{ n: number }] = await db`
    select count(*)::int as n from webhook_event_outbox where team_id = ${s.teamId}`;
  if (left.n > 0) problems.push(`webhooks: ${left.n} events left in the outbox`);
  return problems;
}

/** A summary line of what arrived. */
export function receivedSummary(receiver: WebhookReceiver): string {
  return Object.keys(WATCHED).map((type) => `${receiver.events.get(type)?.size ?? 0} ${type}`).join(", ");
}
