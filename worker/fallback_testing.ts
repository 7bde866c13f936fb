/** The harness of the channel fallback tests: the service on an engine of its own, with a fake Twilio. */
import twilio from "twilio";
import type { Deps } from "../shared/deps.ts";
import { hotStateDeps } from "../shared/deps.ts";
import { PgBossQueue } from "../shared/engine/pg_boss_queue.ts";
import { testQueueOptions } from "../shared/engine/pg_boss_testing.ts";
import { postgresHotState } from "../shared/engine/postgres/hot_state.ts";
import type { TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { onKv, testDeps } from "../shared/testing.ts";
import { twilioOnLoopback } from "./sms_testing.ts";
import { type SendingFixture, sendingFixtureOn, upsertIdentity } from "./testing.ts";

/** The fake Twilio's auth token, which signs its status callbacks. */
export const TWILIO_TOKEN = "twilio-auth-token-for-fallback-tests";

/** WhatsApp refuses this kind of number for good (Twilio's 63016: outside the session window). */
export const REFUSED: TwilioErrorBody = { status: 400, code: 63016, message: "Failed to send freeform message" };

/**
 * The service on an engine (and queue) of the test's own, its worker running, with SMS and WhatsApp
 * sent through Twilio's real SDK to a fake Twilio on loopback (`errors` by To), email and push to the
 * outbox; a team with sender numbers, templates under the key `order` on every channel, and money.
 */
export async function fallbackFixture(errors: Record<string, TwilioErrorBody> = {}) {
  const base = await testDeps({ TWILIO_AUTH_TOKEN: TWILIO_TOKEN });
  const fake = twilioOnLoopback({ errors });
  const engine = await ownEngine(base);
  const deps: Deps = {
    ...engine.deps,
    providers: {
      outbox: base.providers.outbox,
      get: (channel, { sandbox }) =>
        !sandbox && (channel === "sms" || channel === "whatsapp") ? fake.provider : base.providers.outbox,
    },
  };
  const f = await sendingFixtureOn(deps);
  for (const channel of ["sms", "whatsapp"] as const) {
    await upsertIdentity(deps.sql, f.team.id, channel, "main", { from: "+15005550006", is_default: true });
  }
  await f.template("whatsapp", "order", { body: "Order {{n}} shipped", category: "UTILITY" });
  await f.template("sms", "order", { body: "SMS: order {{n}} shipped" });
  await f.template("email", "order", { subject: "Order {{n}}", html: "<p>Order {{n}} shipped</p>" });
  await f.fund(1);
  return {
    f,
    fake,
    /** Twilio requests to `to` ("whatsapp:+…" for WhatsApp). */
    requestsTo: fake.requestsTo,
    async close() {
      await fake.server.close();
      await engine.close();
    },
  };
}

/** The configured engine's hot state and a queue of the test's own, so that its worker has these deps. */
async function ownEngine(base: Deps): Promise<{ deps: Deps; close(): Promise<void> }> {
  if (base.config.ENGINE === "postgres") {
    const hot = postgresHotState(base.sql);
    const schema = `pgboss_fb_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
    const queue = await PgBossQueue.start<{ type: string }>(base.sql, testQueueOptions(schema, "jobs"));
    // A KV of its own too: what a process keeps per KV database (the workflow start acceptor) must
    // carry this test's queue, not that of an earlier test, stopped since.
    const kv = await Deno.openKv(":memory:");
    return {
      deps: { ...base, ...hotStateDeps(hot), queue, kv },
      async close() {
        await queue.stop();
        await hot.close();
        kv.close();
      },
    };
  }
  const kv = await Deno.openKv(":memory:");
  return { deps: onKv(base, kv), close: () => Promise.resolve(kv.close()) };
}

/** The trigger's executions as GET /triggers/{id}/direct lists them: channel, status and counts. */
export async function executions(f: SendingFixture, triggerId: string) {
  const body = await (await f.get(`/api/v1/triggers/${triggerId}/direct`)).json();
  return body.executions.map((
    e: {
      channel: string;
      execution: {
        status: string;
        total_contacts: number;
        sent_count: number;
        failed_count: number;
        filtered_count: number;
      };
    },
  ) => [
    e.channel,
    e.execution.status,
    e.execution.total_contacts,
    e.execution.sent_count,
    e.execution.failed_count,
    e.execution.filtered_count,
  ]);
}

/** The trigger's messages: channel, contact, status, cost (micro-dollars), by channel then address. */
export async function messages(f: SendingFixture, triggerId: string) {
  const rows = await f.deps.sql<{ channel: string; to_address: string | null; status: string; cost: number }[]>`
    select channel, to_address, status, cost_micros::int as cost from messages where trigger_id = ${triggerId}
    order by channel, to_address`;
  return rows.map((r) => [r.channel, r.to_address, r.status, r.cost]);
}

/** A Twilio status callback, signed as Twilio signs it. */
export function twilioStatus(fields: Record<string, string>): [string, RequestInit] {
  const url = "http://localhost/api/v1/inbound/twilio/status";
  return [url, {
    method: "POST",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      "X-Twilio-Signature": twilio.getExpectedTwilioSignature(TWILIO_TOKEN, url, fields),
    },
    body: new URLSearchParams(fields).toString(),
  }];
}
