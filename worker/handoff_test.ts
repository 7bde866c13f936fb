import assert from "node:assert/strict";
import type { Deps } from "../shared/deps.ts";
import { toMicros } from "../shared/money.ts";
import type { TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import type { Provider } from "../shared/providers/types.ts";
import { dbTest, testDeps } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { createWorkerContext } from "./context.ts";
import { CLAIMS_AT_ONCE } from "./hand_over_log.ts";
import { HAND_OVER_WINDOW_MS, SEND_CONCURRENCY } from "./handoff.ts";
import type { DeliverBatchJob } from "./jobs.ts";
import { runJob } from "./queue.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../shared/backoff.ts";
import { counts, listenToAll, smsFanOut, triggerRow, twilioOnLoopback, withProvider } from "./sms_testing.ts";
import { stoppingBeforeWebhooks } from "./testing.ts";

const MAY_HAVE_SENT = "Cannot send sms: the service stopped while twilio was sending it, so it may have been sent; " +
  "it is not tried again (a second try could send it twice)";
const SMS_MICROS = 7_500;

/**
 * A send of `contacts` SMS (to +14155552000, +14155552001…) whose first pass dies with every message
 * handed to Twilio: Twilio takes those `reached` says it does, the others never reach it, and the
 * pass never records an answer. `job` runs it again with the hand-over window over, events kept staged.
 */
async function abandonedByADeadPass(contacts: number, reached: (to: string) => boolean) {
  const deps = await testDeps();
  const errors: Record<string, TwilioErrorBody> = {};
  const twilio = twilioOnLoopback({ errors });
  const { team, spec, job } = await smsFanOut(deps, contacts);
  await listenToAll(deps, team.id);
  // Messages the dying pass is done with: Twilio created each one it takes before the pass stops.
  let handed = 0;
  const dying: Provider = {
    ...twilio.provider,
    async send(message) {
      if (reached(message.to)) await twilio.provider.send(message);
      handed++;
      return await new Promise(() => {});
    },
  };
  void runJob(createWorkerContext(withProvider(deps, dying)), job);
  for (let i = 0; i < 1_000 && handed < contacts; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(handed, contacts, "the dying pass handed every message over");
  const later: Deps = { ...deps, now: () => Date.now() + HAND_OVER_WINDOW_MS };
  const run = (attempt: number) =>
    runJob(
      createWorkerContext(stoppingBeforeWebhooks(withProvider(later, twilio.provider))),
      {
        ...job,
        id: crypto.randomUUID(),
        attempt,
      } satisfies DeliverBatchJob,
    );
  const rowOf = async (to: string) => {
    const [row] = await deps.sql`select status, error, cost_micros, handed_at, provider_message_id from messages
      where trigger_id = ${spec.trigger_id} and to_address = ${to}`;
    return { ...row };
  };
  const eventsOf = async (to: string) => {
    const rows = await deps.sql<{ type: string; sid: string | null }[]>`
      select e.type, e.data->>'provider_message_id' as sid from webhook_event_outbox e
      join messages m on m.id = e.data->>'message_id'
      where m.trigger_id = ${spec.trigger_id} and m.to_address = ${to}`;
    return rows.map((r) => ({ ...r }));
  };
  const refunds = async () => {
    const [{ n }] = await deps.sql`select count(*)::int as n from wallet_ledger
      where team_id = ${team.id} and kind = 'refund'`;
    return n;
  };
  return { deps, twilio, errors, team, spec, run, rowOf, eventsOf, refunds };
}

dbTest(
  "a message a dead pass handed to Twilio is recorded sent with Twilio's sid when Twilio's log has it",
  async () => {
    const t = await abandonedByADeadPass(2, (to) => to === "+14155552000");
    await using _ = t.twilio.server;
    assert.equal(t.twilio.server.messages.length, 1);
    const [taken] = t.twilio.server.messages;

    await t.run(1);

    assert.deepEqual([2000, 2001].map((n) => t.twilio.requestsTo(`+1415555${n}`)), [1, 0], "nothing sent again");
    assert.deepEqual(await t.rowOf("+14155552000"), {
      status: "sent",
      error: null,
      cost_micros: SMS_MICROS,
      handed_at: null,
      provider_message_id: taken.sid,
    });
    assert.deepEqual(await t.eventsOf("+14155552000"), [{ type: "message.sent", sid: taken.sid }]);
    // The one Twilio does not have is failed and refunded, as before the look-up.
    assert.deepEqual(await t.rowOf("+14155552001"), {
      status: "failed",
      error: MAY_HAVE_SENT,
      cost_micros: 0,
      handed_at: null,
      provider_message_id: null,
    });
    assert.deepEqual(await t.eventsOf("+14155552001"), [{ type: "message.failed", sid: null }]);
    assert.deepEqual(await triggerRow(t.deps, t.spec.trigger_id), counts("completed", 2, 1, 1, 0));
    assert.equal(
      await balanceMicros(t.deps.sql, t.team.id),
      toMicros(10) - SMS_MICROS,
      "charged once, for the one sent",
    );
    assert.equal(await t.refunds(), 1);
    // A redelivery of the job finds both settled: nothing charged, refunded or reported again.
    await t.run(2);
    assert.equal(await balanceMicros(t.deps.sql, t.team.id), toMicros(10) - SMS_MICROS);
    assert.equal((await t.eventsOf("+14155552000")).length, 1);
  },
);

dbTest("two alike messages a dead pass handed to Twilio get one sid each", async () => {
  const t = await abandonedByADeadPass(2, () => true);
  await using _ = t.twilio.server;
  // The same body to the same number twice: the second contact's number and name made the first's.
  await t.deps.sql`update messages set to_address = '+14155552000' where trigger_id = ${t.spec.trigger_id}`;
  await t.deps.sql`update contacts set first_name = 'P0', custom_fields = '{"phone": "+14155552000"}'
    where team_id = ${t.team.id}`;
  for (const m of t.twilio.server.messages) Object.assign(m, { to: "+14155552000", body: "Hi P0" });

  await t.run(1);

  const rows = await t.deps.sql`select status, provider_message_id from messages
    where trigger_id = ${t.spec.trigger_id} order by provider_message_id`;
  const sids = t.twilio.server.messages.map((m) => m.sid).sort();
  assert.deepEqual(rows.map((r) => ({ ...r })), sids.map((sid) => ({ status: "sent", provider_message_id: sid })));
});

dbTest(
  "a message whose Twilio log cannot be read is looked up again, and failed and refunded on the last try",
  async () => {
    const t = await abandonedByADeadPass(2, () => true);
    await using _ = t.twilio.server;
    const down: TwilioErrorBody = { status: 500, code: 20500, message: "An internal server error has occurred" };
    t.errors["+14155552000"] = t.errors["+14155552001"] = down;

    await t.run(1);

    for (const to of ["+14155552000", "+14155552001"]) {
      const row = await t.rowOf(to);
      assert.equal(row.status, "pending", "left for the next try");
      assert.ok(row.handed_at !== null, "still known to be in Twilio's hands");
    }
    assert.deepEqual(await t.eventsOf("+14155552000"), []);
    delete t.errors["+14155552000"];
    await t.run(MAX_DELIVERY_ATTEMPTS - 1);

    assert.deepEqual([2000, 2001].map((n) => t.twilio.requestsTo(`+1415555${n}`)), [1, 1], "nothing sent again");
    const sent = await t.rowOf("+14155552000");
    assert.equal(sent.status, "sent");
    assert.equal(sent.provider_message_id, t.twilio.server.messages.find((m) => m.to === "+14155552000")!.sid);
    const failed = await t.rowOf("+14155552001");
    assert.equal(failed.status, "failed");
    assert.equal(failed.cost_micros, 0);
    assert.match(
      failed.error,
      /may have been sent; .*twilio's message log could not be read: .*\(gave up after retries\)$/,
    );
    assert.deepEqual(await triggerRow(t.deps, t.spec.trigger_id), counts("completed", 2, 1, 1, 0));
    assert.equal(await balanceMicros(t.deps.sql, t.team.id), toMicros(10) - SMS_MICROS);
    assert.equal(await t.refunds(), 1);
  },
);

dbTest(
  "a pass that dies mid-way leaves one window of messages claimed: settled through Twilio's log, the rest sent",
  async () => {
    const deps = await testDeps();
    const twilio = twilioOnLoopback({});
    await using _ = twilio.server;
    const contacts = 2 * SEND_CONCURRENCY + 5;
    const { team, spec, job } = await smsFanOut(deps, contacts);
    await listenToAll(deps, team.id);
    // The dying pass: Twilio takes every other message it is handed, and no answer ever comes back.
    const handed: string[] = [];
    const reached = new Set<string>();
    const dying: Provider = {
      ...twilio.provider,
      async send(message) {
        if (handed.push(message.to) % 2 === 1) {
          await twilio.provider.send(message);
          reached.add(message.to);
        }
        return await new Promise(() => {});
      },
    };
    void runJob(createWorkerContext(withProvider(deps, dying)), job);
    for (let i = 0; i < 1_000 && reached.size < SEND_CONCURRENCY / 2; i++) await new Promise((r) => setTimeout(r, 10));
    const [{ claimed }] = await deps.sql`select count(*)::int as claimed from messages
      where trigger_id = ${spec.trigger_id} and handed_at is not null`;
    assert.equal(claimed, SEND_CONCURRENCY, "claimed: the window in Twilio's hands, no more");
    assert.equal(handed.length, SEND_CONCURRENCY);

    const later: Deps = { ...deps, now: () => Date.now() + HAND_OVER_WINDOW_MS };
    await runJob(
      createWorkerContext(stoppingBeforeWebhooks(withProvider(later, twilio.provider))),
      {
        ...job,
        id: crypto.randomUUID(),
        attempt: 1,
      } satisfies DeliverBatchJob,
    );

    const rows = await deps.sql<{ to: string; status: string; error: string | null; sid: string | null }[]>`
      select to_address as to, status, error, provider_message_id as sid from messages
      where trigger_id = ${spec.trigger_id}`;
    const lost = handed.filter((to) => !reached.has(to));
    for (const row of rows) {
      const at = `message to ${row.to}`;
      if (lost.includes(row.to)) {
        assert.deepEqual([row.status, row.error], ["failed", MAY_HAVE_SENT], at);
        assert.equal(twilio.requestsTo(row.to), 0, at);
        continue;
      }
      // Reached by the dying pass (found in Twilio's log) or never claimed by it (sent now): once each.
      assert.equal(row.status, "sent", at);
      assert.equal(twilio.requestsTo(row.to), 1, at);
      assert.equal(row.sid, twilio.server.messages.find((m) => m.to === row.to)?.sid, at);
    }
    assert.equal(lost.length, SEND_CONCURRENCY / 2);
    assert.deepEqual(
      await triggerRow(deps, spec.trigger_id),
      counts("completed", contacts, contacts - lost.length, lost.length, 0),
    );
  },
);

dbTest("messages are claimed a few at a time, just before their requests, not a whole window at once", async () => {
  const deps = await testDeps();
  const twilio = twilioOnLoopback({});
  await using _ = twilio.server;
  const { spec, job } = await smsFanOut(deps, SEND_CONCURRENCY);
  // What a kill at the first request would leave claimed: counted before any answer can be recorded.
  let claimedAtFirst: number | undefined;
  const counting: Provider = {
    ...twilio.provider,
    async send(message) {
      if (claimedAtFirst === undefined) {
        claimedAtFirst = -1;
        const [{ n }] = await deps.sql`select count(*)::int as n from messages
          where trigger_id = ${spec.trigger_id} and handed_at is not null`;
        claimedAtFirst = n;
      }
      return await twilio.provider.send(message);
    },
  };
  await runJob(createWorkerContext(stoppingBeforeWebhooks(withProvider(deps, counting))), job);
  // The first group, and the one or two claimed while the count was read: not SEND_CONCURRENCY.
  assert.ok(
    claimedAtFirst! >= 1 && claimedAtFirst! <= 3 * CLAIMS_AT_ONCE,
    `claimed at the first request: ${claimedAtFirst}`,
  );
  assert.equal(twilio.server.messages.length, SEND_CONCURRENCY);
});

dbTest("two passes of one job at once, over several hand-over windows, hand each message to Twilio once", async () => {
  const deps = await testDeps();
  // Answers come back out of order, so that the two passes' claims and answers interleave.
  const twilio = twilioOnLoopback({ hold: () => new Promise((r) => setTimeout(r, Math.random() * 20)) });
  await using _ = twilio.server;
  const contacts = 4 * SEND_CONCURRENCY;
  const { spec, job } = await smsFanOut(deps, contacts);
  await Promise.all([1, 2].map(() => runJob(createWorkerContext(withProvider(deps, twilio.provider)), job)));
  const numbers = Array.from({ length: contacts }, (_, i) => `+1415555${2000 + i}`);
  assert.deepEqual(numbers.map((to) => twilio.requestsTo(to)), Array(contacts).fill(1));
  const rows = await deps.sql<{ to: string; sid: string }[]>`select to_address as to, provider_message_id as sid
    from messages where trigger_id = ${spec.trigger_id} and status = 'sent' and handed_at is null`;
  assert.equal(rows.length, contacts);
  for (const r of rows) assert.equal(r.sid, twilio.server.messages.find((m) => m.to === r.to)?.sid);
});
