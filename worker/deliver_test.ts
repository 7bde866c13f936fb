import assert from "node:assert/strict";
import type { Deps } from "../shared/deps.ts";
import { toMicros } from "../shared/money.ts";
import type { TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { type OutboundMessage, type Provider, ProviderError } from "../shared/providers/types.ts";
import type { SendSpec } from "../shared/sending/spec.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { newTriggerRecord } from "../shared/sending/trigger_record.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { dbTest, onKv, testDeps, testTeam } from "../shared/testing.ts";
import { balanceMicros, topUp } from "../shared/wallet.ts";
import { createContact } from "../shared/contacts/queries.ts";
import { createWorkerContext } from "./context.ts";
import { HAND_OVER_WINDOW_MS } from "./handoff.ts";
import { createService } from "../main.ts";
import { runJob } from "./queue.ts";
import { randomToken, stoppingBeforeWebhooks, withMessagesRefusedTo } from "./testing.ts";
import {
  counts,
  listenToAll,
  seeingEnqueues,
  smsFanOut,
  triggerRow,
  twilioOnLoopback,
  withProvider,
} from "./sms_testing.ts";
import { MAX_DELIVERY_ATTEMPTS } from "../shared/backoff.ts";
import { EVENT_SWEEP_AGE_MS, sweepEventOutbox } from "../shared/event_outbox.ts";
import type { WebhookDeliverJob } from "../shared/webhook_events.ts";

/** A provider that records what it is given and answers as `behave` says. */
function fakeProvider(behave: (m: OutboundMessage, call: number) => Promise<void> | void = () => {}) {
  const sent: OutboundMessage[] = [];
  let calls = 0;
  const provider: Provider = {
    name: "fake",
    resendable: true,
    async send(message) {
      await behave(message, calls++);
      sent.push(message);
      return { providerMessageId: `fake_${message.id}` };
    },
  };
  return { provider, sent };
}

dbTest("a deliver-batch job run twice sends each message once and counts it once", async () => {
  const deps = await testDeps();
  const { provider, sent } = fakeProvider();
  const w = createWorkerContext(withProvider(deps, provider));
  const { team, spec, job } = await smsFanOut(deps, 5);
  await runJob(w, job);
  await runJob(w, job);
  assert.equal(sent.length, 5);
  assert.equal(new Set(sent.map((m) => m.to)).size, 5);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 5, 5, 0, 0));
  assert.equal(await balanceMicros(deps.sql, team.id), toMicros(10) - 5 * 7_500);
});

dbTest("a batch interrupted after recording sends only what is still pending when redelivered", async () => {
  const deps = await testDeps();
  // First pass: the provider never answers (the process "dies" with every message recorded pending).
  const hang = fakeProvider(() => new Promise<void>(() => {}));
  const { team, spec, job } = await smsFanOut(deps, 4);
  void runJob(createWorkerContext(withProvider(deps, hang.provider)), job);
  for (let i = 0; i < 100; i++) {
    const [{ n }] = await deps.sql`select count(*)::int as n from messages where trigger_id = ${spec.trigger_id}`;
    if (n === 4) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  // Redelivery after the "restart": the same job, a working provider.
  const { provider, sent } = fakeProvider();
  await runJob(createWorkerContext(withProvider(deps, provider)), job);
  assert.equal(sent.length, 4);
  const ids = await deps.sql`select id from messages where trigger_id = ${spec.trigger_id} order by id`;
  assert.deepEqual(sent.map((m) => m.id).sort(), ids.map((r) => r.id));
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 4, 4, 0, 0));
  // Charged once, when the messages were first recorded.
  assert.equal(await balanceMicros(deps.sql, team.id), toMicros(10) - 4 * 7_500);
  await runJob(createWorkerContext(withProvider(deps, provider)), job);
  assert.equal(sent.length, 4);
});

dbTest("a message handed to Twilio by a pass that died is failed with the reason, never sent twice", async () => {
  const deps = await testDeps();
  // First pass: Twilio answers one message at once, takes the other, and the process "dies" before
  // it reads that answer.
  let release = () => {};
  let holding = true;
  const held = new Promise<void>((resolve) => release = resolve);
  const twilio = twilioOnLoopback({ hold: (to) => holding && to.endsWith("2001") ? held : undefined });
  await using _ = twilio.server;
  const { team, spec, job } = await smsFanOut(deps, 2);
  const first = runJob(createWorkerContext(withProvider(deps, twilio.provider)), job);
  const statusOf = async (to: string) => {
    const [row] = await deps.sql`select status, error, cost_micros, handed_at, provider_message_id from messages
      where trigger_id = ${spec.trigger_id} and to_address = ${to}`;
    return row;
  };
  try {
    // Until Twilio has both and the first answer is recorded (at most 5 s: the assertions below say what is missing).
    for (let i = 0; i < 500; i++) {
      if ((await statusOf("+14155552000"))?.status === "sent" && twilio.server.requests.length === 2) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    // A second pass of the job at once (a redelivery beside a re-enqueued job): the message another
    // pass holds is neither sent nor judged yet.
    holding = false;
    await runJob(createWorkerContext(withProvider(deps, twilio.provider)), job);
    assert.deepEqual([2000, 2001].map((n) => twilio.requestsTo(`+1415555${n}`)), [1, 1]);
    assert.equal((await statusOf("+14155552001")).status, "pending");
    assert.equal((await triggerRow(deps, spec.trigger_id)).status, "processing");
    // Once the hand-over window is over, the pass that held it is taken for dead.
    const later = { ...deps, now: () => Date.now() + HAND_OVER_WINDOW_MS };
    await runJob(createWorkerContext(withProvider(later, twilio.provider)), { ...job, attempt: 1 });
    assert.deepEqual([2000, 2001].map((n) => twilio.requestsTo(`+1415555${n}`)), [1, 1]);
    assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 2, 1, 1, 0));
    // The one answered was recorded as soon as Twilio answered: it is sent, with Twilio's id.
    const answered = await statusOf("+14155552000");
    assert.match(answered.provider_message_id, /^SM[0-9a-f]{32}$/);
    assert.equal(answered.cost_micros, 7_500);
    const unknown = await statusOf("+14155552001");
    assert.deepEqual({ ...unknown }, {
      status: "failed",
      error: "Cannot send sms: the service stopped while twilio was sending it, so it may have been sent; " +
        "it is not tried again (a second try could send it twice)",
      cost_micros: 0,
      handed_at: null,
      provider_message_id: null,
    });
    assert.equal(await balanceMicros(deps.sql, team.id), toMicros(10) - 7_500);
  } finally {
    // The "dead" pass's requests are still open: answer them, so that the fake server can close.
    release();
    await first;
  }
});

dbTest("a last try that meets a message another pass is handing to Twilio leaves it to that pass", async () => {
  const deps = await testDeps();
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  let holding = true;
  const twilio = twilioOnLoopback({ hold: (to) => holding && to.endsWith("2001") ? held : undefined });
  await using _ = twilio.server;
  const { spec, job } = await smsFanOut(deps, 2);
  const first = runJob(createWorkerContext(withProvider(deps, twilio.provider)), job);
  try {
    for (let i = 0; i < 500 && twilio.server.requests.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    holding = false;
    // The job's last try, while the first pass still waits for Twilio's answer: it must not give up
    // on the message (the first pass may be sending it, and is).
    await runJob(createWorkerContext(withProvider(deps, twilio.provider)), {
      ...job,
      id: crypto.randomUUID(),
      attempt: MAX_DELIVERY_ATTEMPTS - 1,
    });
    const [row] = await deps.sql`select status, error from messages
      where trigger_id = ${spec.trigger_id} and to_address = '+14155552001'`;
    assert.deepEqual({ ...row }, { status: "pending", error: null });
  } finally {
    release();
    await first;
  }
  assert.deepEqual([2000, 2001].map((n) => twilio.requestsTo(`+1415555${n}`)), [1, 1]);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 2, 2, 0, 0));
});

dbTest("two passes of one job at once hand each message to Twilio once", async () => {
  const deps = await testDeps();
  const twilio = twilioOnLoopback({});
  await using _ = twilio.server;
  const { spec, job } = await smsFanOut(deps, 20);
  // A queue redelivery beside the same job re-enqueued from a dead process's journal.
  await Promise.all([1, 2].map(() => runJob(createWorkerContext(withProvider(deps, twilio.provider)), job)));
  const counts = Array.from({ length: 20 }, (_, i) => twilio.requestsTo(`+1415555${2000 + i}`));
  assert.deepEqual(counts, Array(20).fill(1));
  const [{ sent }] = await deps.sql`select count(*)::int as sent from messages
    where trigger_id = ${spec.trigger_id} and status = 'sent'`;
  assert.equal(sent, 20);
});

dbTest("a message Twilio refused with a 429 is handed to it again on the retry", async () => {
  const deps = await testDeps();
  const errors: Record<string, TwilioErrorBody> = {
    "+14155552001": { status: 429, code: 20429, message: "Too Many Requests" },
  };
  const twilio = twilioOnLoopback({ errors });
  await using _ = twilio.server;
  const { spec, job } = await smsFanOut(deps, 3);
  const w = createWorkerContext(withProvider(deps, twilio.provider));
  await runJob(w, job);
  const [pending] = await deps.sql`select status, handed_at from messages
    where trigger_id = ${spec.trigger_id} and to_address = '+14155552001'`;
  assert.deepEqual({ ...pending }, { status: "pending", handed_at: null });
  delete errors["+14155552001"];
  await runJob(w, { ...job, id: crypto.randomUUID(), attempt: 1 });
  assert.deepEqual([2000, 2001, 2002].map((n) => twilio.requestsTo(`+1415555${n}`)), [1, 2, 1]);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 3, 3, 0, 0));
});

dbTest("a message the provider refuses is failed with its reason and refunded", async () => {
  const deps = await testDeps();
  const { provider, sent } = fakeProvider((m) => {
    if (m.to.endsWith("2001")) throw new ProviderError("Cannot send SMS: number is blocked", { providerCode: "21610" });
  });
  const { team, spec, job } = await smsFanOut(deps, 3);
  await runJob(createWorkerContext(withProvider(deps, provider)), job);
  assert.equal(sent.length, 2);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 3, 2, 1, 0));
  const [failed] = await deps.sql`select error, cost_micros from messages
    where trigger_id = ${spec.trigger_id} and status = 'failed'`;
  assert.equal(failed.error, "Cannot send SMS: number is blocked");
  assert.equal(failed.cost_micros, 0);
  assert.equal(await balanceMicros(deps.sql, team.id), toMicros(10) - 2 * 7_500);
});

dbTest("a temporary provider failure keeps the batch open and the retry sends only the failed message", async () => {
  const deps = await testDeps();
  let failing = true;
  const { provider, sent } = fakeProvider((m) => {
    if (failing && m.to.endsWith("2000")) throw new ProviderError("Twilio is busy", { temporary: true });
  });
  const { spec, job } = await smsFanOut(deps, 3);
  const w = createWorkerContext(withProvider(deps, provider));
  await runJob(w, job);
  assert.equal(sent.length, 2);
  assert.equal((await triggerRow(deps, spec.trigger_id)).status, "processing");
  failing = false;
  await runJob(w, { ...job, id: crypto.randomUUID(), attempt: 1 });
  assert.equal(sent.length, 3);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 3, 3, 0, 0));
});

dbTest("a single send waiting for its provider's retry is listed as processing, then as completed", async () => {
  const deps = await testDeps();
  const { team, keys } = await testTeam(deps);
  await topUp(deps.sql, team.id, toMicros(1));
  await upsertTemplate(deps.sql, team.id, "sms", "hi", { body: "Hi" });
  const spec = testSendSpec(team.id, { sandbox: false }, "hi");
  const [execution] = spec.executions;
  let failing = true;
  const { provider, sent } = fakeProvider(() => {
    if (failing) throw new ProviderError("Twilio is busy", { temporary: true });
  });
  const w = createWorkerContext(withProvider(deps, provider));
  const app = createService(deps);
  const get = async (path: string) =>
    await (await app.request(`/api/v1${path}`, { headers: { "X-API-Key": keys.live } })).json();
  const listed = async () =>
    (await get("/sms/executions?limit=100")).executions.find((e: { id: string }) => e.id === execution.id);

  await runJob(w, { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: 0 });
  assert.equal(sent.length, 0);
  assert.equal((await listed())?.status, "processing");
  assert.equal((await get(`/triggers/${spec.trigger_id}`)).status, "processing");
  failing = false;
  await runJob(w, { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: 1 });
  assert.equal(sent.length, 1);
  const done = await listed();
  assert.deepEqual([done.status, done.sent_count, done.total_contacts], ["completed", 1, 1]);
  assert.equal((await get(`/triggers/${spec.trigger_id}`)).status, "completed");
});

dbTest("a batch's retry waits as long as the longest Retry-After its providers asked for", async () => {
  const deps = await testDeps();
  const asked = new Map([["2000", 90_000], ["2001", 30_000]]);
  const { provider } = fakeProvider((m) => {
    const ms = asked.get(m.to.slice(-4));
    if (ms) throw new ProviderError("Too many requests", { temporary: true, retryAfterMs: ms });
  });
  const { job } = await smsFanOut(deps, 3);
  const delays: number[] = [];
  const seeing = seeingEnqueues(deps, (_job, options) => delays.push(options.delayMs ?? 0));
  await runJob(createWorkerContext(withProvider(seeing, provider)), job);
  assert.equal(delays.length, 1);
  assert.ok(delays[0] >= 90_000 && delays[0] <= 108_000, String(delays[0]));
});

dbTest("a temporary failure on the last attempt fails the message", async () => {
  const deps = await testDeps();
  const { provider } = fakeProvider(() => {
    throw new ProviderError("Twilio is down", { temporary: true });
  });
  const { spec, job } = await smsFanOut(deps, 2);
  await runJob(createWorkerContext(withProvider(deps, provider)), { ...job, attempt: 4 });
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("failed", 2, 0, 2, 0));
  const [row] = await deps.sql`select error from messages where trigger_id = ${spec.trigger_id} limit 1`;
  assert.equal(row.error, "Twilio is down (gave up after retries)");
});

/** A live push send to one new contact holding these device tokens (android), run once through `provider`. */
async function pushToTokens(deps: Deps, tokens: string[], provider: Provider) {
  const { team } = await testTeam(deps);
  const contact = await createContact(deps.sql, team.id, { email: `d.${crypto.randomUUID().slice(0, 8)}@example.com` });
  for (const token of tokens) {
    await deps.sql`insert into device_tokens ${
      deps.sql({ team_id: team.id, contact_id: contact.id, token, platform: "android" })
    }`;
  }
  const spec = testSendSpec(team.id, {
    sandbox: false,
    trigger_type: "push",
    recipient_type: "contact",
    recipient: { type: "contact", contact_id: contact.id, external_id: contact.external_id },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "push", title: "Hi", body: "There", category: "transactional" },
    }],
  });
  await deps.sendState.putTrigger(newTriggerRecord(spec));
  await runJob(createWorkerContext(withProvider(deps, provider)), {
    type: "send-group",
    id: crypto.randomUUID(),
    sends: [spec],
    attempt: 0,
  });
  return { contact, spec };
}

dbTest("a push token the provider calls invalid is removed from the contact", async () => {
  const deps = await testDeps();
  const good = "a".repeat(40);
  const stale = "b".repeat(40);
  const { provider, sent } = fakeProvider((m) => {
    if (m.to === stale) throw new ProviderError("Unregistered", { invalidToken: true });
  });
  const { contact, spec } = await pushToTokens(deps, [good, stale], provider);
  assert.deepEqual(sent.map((m) => [m.to, m.title, m.text, m.priority]), [[good, "Hi", "There", "high"]]);
  const tokens = await deps.sql`select token from device_tokens where contact_id = ${contact.id}`;
  assert.deepEqual(tokens.map((t) => t.token), [good]);
  assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 2, 1, 1, 0));
});

dbTest(
  "push tokens of 4,096 characters are sent once each, and one the provider calls invalid is removed",
  async () => {
    const deps = await testDeps();
    // Random, so that no index can compress them under its 2,704-byte rows (migration 008, recipientKey).
    const long = [randomToken(4_096), randomToken(4_096), randomToken(2_049)];
    const { provider, sent } = fakeProvider((m) => {
      if (m.to === long[1]) throw new ProviderError("Unregistered", { invalidToken: true });
    });
    const { contact, spec } = await pushToTokens(deps, long, provider);
    assert.deepEqual(sent.map((m) => m.to).sort(), [long[0], long[2]].sort());
    assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 3, 2, 1, 0));
    const tokens = await deps.sql`select token from device_tokens where contact_id = ${contact.id}`;
    assert.deepEqual(tokens.map((t) => t.token).sort(), [long[0], long[2]].sort());
    const keys = await deps.sql`select recipient from messages where trigger_id = ${spec.trigger_id}`;
    assert.ok(keys.every((k) => /^[0-9a-f-]{36}:sha256:[0-9a-f]{64}$/.test(k.recipient)), JSON.stringify(keys));
  },
);

dbTest("a message whose row Postgres refuses fails alone: the rest of its pass is delivered", async () => {
  const deps = await testDeps();
  const refused = randomToken(40);
  const good = ["a", "b", "c"].map((c) => c.repeat(40));
  const { provider, sent } = fakeProvider();
  await withMessagesRefusedTo(deps, refused, async () => {
    const { spec } = await pushToTokens(deps, [good[0], refused, ...good.slice(1)], provider);
    assert.deepEqual(sent.map((m) => m.to).sort(), good);
    assert.deepEqual(await triggerRow(deps, spec.trigger_id), counts("completed", 4, 3, 1, 0));
  });
});

dbTest("a NUL character in a template variable is dropped: the whole merged batch is delivered", async () => {
  const deps = await testDeps();
  const sends: SendSpec[] = [];
  for (const variables of [{ name: "Ann\u0000e" }, { name: "Bob" }]) {
    const { team } = await testTeam(deps);
    await topUp(deps.sql, team.id, toMicros(1));
    await upsertTemplate(deps.sql, team.id, "sms", "hi", { body: "Hi {{name}}" });
    const spec = testSendSpec(team.id, { sandbox: false, variables }, "hi");
    await deps.sendState.putTrigger(newTriggerRecord(spec));
    sends.push(spec);
  }
  // Both sends in one send-group job, as two requests accepted together are.
  await runJob(createWorkerContext(deps), { type: "send-group", id: crypto.randomUUID(), sends, attempt: 0 });
  for (const [spec, text] of [[sends[0], "Hi Anne"], [sends[1], "Hi Bob"]] as const) {
    const rows = await deps.sql`select body from outbox_all where trigger_id = ${spec.trigger_id}`;
    assert.deepEqual(rows.map((r) => r.body), [text]);
    assert.equal((await triggerRow(deps, spec.trigger_id)).status, "completed");
  }
});

dbTest("the webhook events of a pass that stops before it relays them reach the queue once, by the sweep", async () => {
  const deps = await testDeps();
  const { provider } = fakeProvider();
  const { team, spec, job } = await smsFanOut(deps, 3);
  await listenToAll(deps, team.id);
  await runJob(createWorkerContext(stoppingBeforeWebhooks(withProvider(deps, provider))), job);
  const staged = async () => [
    ...await deps.sql<{ id: string; type: string; message_id: string | null }[]>`
      select id, type, data->>'message_id' as message_id from webhook_event_outbox where team_id = ${team.id}
      order by type, message_id`,
  ];
  const left = await staged();
  const messages = await deps.sql`select id from messages where trigger_id = ${spec.trigger_id} order by id`;
  assert.deepEqual(left.map((e) => [e.type, e.message_id]), [
    ...messages.map((m) => ["message.sent", m.id]),
    ["trigger.completed", null],
  ]);
  // The job, redelivered, finds every message and the trigger final: it stages nothing again.
  await runJob(createWorkerContext(withProvider(deps, provider)), job);
  assert.deepEqual(await staged(), left);
  const kv = await Deno.openKv(":memory:");
  try {
    const relayed: string[] = [];
    kv.listenQueue((j) => void relayed.push(...(j as WebhookDeliverJob).deliveries.map((d) => d.event.id)));
    const later = { ...onKv(deps, kv), now: () => Date.now() + EVENT_SWEEP_AGE_MS };
    assert.equal(await sweepEventOutbox(later), 4);
    for (let i = 0; i < 200 && relayed.length < 4; i++) await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(relayed.sort(), left.map((e) => e.id).sort());
    assert.deepEqual(await staged(), []);
  } finally {
    kv.close();
  }
});

dbTest("a message Twilio took is recorded sent with its message.sent staged in the same transaction", async () => {
  const deps = await testDeps();
  const twilio = twilioOnLoopback({});
  await using _ = twilio.server;
  const { team, spec, job } = await smsFanOut(deps, 2);
  await listenToAll(deps, team.id);
  await runJob(createWorkerContext(stoppingBeforeWebhooks(withProvider(deps, twilio.provider))), job);
  const rows = await deps.sql<{ status: string; sid: string; staged: string | null }[]>`
    select m.status, m.provider_message_id as sid, e.data->>'provider_message_id' as staged
    from messages m
    left join webhook_event_outbox e on e.type = 'message.sent' and e.data->>'message_id' = m.id
    where m.trigger_id = ${spec.trigger_id}`;
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.equal(row.status, "sent");
    assert.match(row.sid, /^SM[0-9a-f]{32}$/);
    assert.equal(row.staged, row.sid, "the event carries Twilio's id, staged with the row");
  }
});
