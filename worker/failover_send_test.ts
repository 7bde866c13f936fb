import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { createApiKey } from "../shared/api_keys.ts";
import { type ChannelAccountInput, channelAccountsKey, putChannelAccounts } from "../shared/channel_accounts.ts";
import type { Deps, Team } from "../shared/deps.ts";
import { toMicros } from "../shared/money.ts";
import { BREAKER_COOLDOWN_MS, BREAKER_THRESHOLD } from "../shared/providers/circuit_breaker.ts";
import { randomHex, startFakeTwilio, type TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { startFakeVonage, type VonageErrorSpec } from "../harness/fakes/fake_vonage.ts";
import { createTwilioProvider } from "../shared/providers/twilio.ts";
import type { OutboundMessage, Provider } from "../shared/providers/types.ts";
import { dbTest, testDeps } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { createWorkerContext } from "./context.ts";
import { HAND_OVER_WINDOW_MS } from "./handoff.ts";
import { runJob } from "./queue.ts";
import { counts, smsFanOut, triggerRow, twilioOnLoopback, withProvider } from "./sms_testing.ts";

const UNAVAILABLE: TwilioErrorBody = { status: 503, code: 20503, message: "Service unavailable" };
const INVALID_NUMBER: TwilioErrorBody = { status: 400, code: 21211, message: "Invalid 'To' Phone Number" };
const GATEWAY_TIMEOUT: TwilioErrorBody = { status: 504, code: 20504, message: "Gateway timeout" };
const SMS_MICROS = 7_500;
/** The number smsFanOut's first contact has. */
const FIRST = "+14155552000";

/** A Twilio account of a team on a fake Twilio of its own (`errors` and `hold` read at each request). */
function twilioAccount(
  options: { errors?: Record<string, TwilioErrorBody>; hold?: (to: string) => Promise<void> | undefined } = {},
) {
  const credentials = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16), from: "+15005550006" };
  const server = startFakeTwilio({ ...credentials, ...options });
  const input: ChannelAccountInput = {
    provider: "twilio",
    credentials: { account_sid: credentials.accountSid, auth_token: credentials.authToken, from: credentials.from },
    base_url: server.url,
  };
  /** The same account's client, to act as someone else using it. */
  const client = createTwilioProvider({ ...credentials, baseUrl: server.url });
  return { server, input, client, from: credentials.from };
}

/** A Vonage account of a team on a fake Vonage of its own. */
function vonageAccount(options: { errors?: Record<string, VonageErrorSpec> } = {}) {
  const credentials = { apiKey: randomHex(4), apiSecret: randomHex(8) };
  const server = startFakeVonage({ ...credentials, ...options });
  const input: ChannelAccountInput = {
    provider: "vonage",
    credentials: { api_key: credentials.apiKey, api_secret: credentials.apiSecret, from: "Acme" },
    base_url: server.url,
  };
  return { server, input };
}

/**
 * A send of `contacts` SMS whose team has `accounts` for SMS (the service's default, a Twilio of its
 * own, last); `run` runs its deliver-batch job (again, with a new id) at `now`.
 */
async function failoverSend(
  accounts: ChannelAccountInput[],
  options: { failoverOnTimeout?: boolean; defaultProvider?: Provider } = {},
) {
  const base = await testDeps();
  const fallback = twilioOnLoopback({});
  const deps = withProvider(base, options.defaultProvider ?? fallback.provider);
  const { team, spec, job } = await smsFanOut(deps, 1);
  const ids = await putAccounts(deps, team, accounts, options.failoverOnTimeout);
  const run = (attempt = 0, now: () => number = deps.now) =>
    runJob(createWorkerContext({ ...deps, now }), { ...job, id: crypto.randomUUID(), attempt });
  const row = async () => {
    const [r] = await deps.sql`
      select status, provider, provider_message_id, error, cost_micros, handed_at, handed_account, attempts
      from messages where trigger_id = ${spec.trigger_id}`;
    return { ...r };
  };
  return { deps, team, spec, job, ids, fallback, run, row };
}

async function putAccounts(deps: Deps, team: Team, accounts: ChannelAccountInput[], failoverOnTimeout = false) {
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  const list = await putChannelAccounts(
    deps.sql,
    key,
    { teamId: team.id, channel: "sms", failoverOnTimeout },
    accounts,
  );
  return list.accounts.map((a) => a.id);
}

/**
 * A send of one SMS (to FIRST) whose team has a Twilio account answering as `errors` say, then a
 * Vonage account; every server is closed when it is disposed.
 */
async function twilioThenVonage(
  errors: Record<string, TwilioErrorBody>,
  options: { failoverOnTimeout?: boolean } = {},
) {
  const first = twilioAccount({ errors });
  const second = vonageAccount();
  const t = await failoverSend([first.input, second.input], options);
  return {
    first,
    second,
    t,
    async [Symbol.asyncDispose]() {
      for (const s of [first.server, second.server, t.fallback.server]) await s.close();
    },
  };
}

/** The outcomes of a message row's attempts, in order. */
function outcomesOf(row: Record<string, unknown>): string[] {
  return (row.attempts as { outcome: string }[]).map((a) => a.outcome);
}

/** `provider_attempts_total{provider, outcome}` as GET /metrics shows it. */
async function attemptsMetric(deps: Deps, provider: string, outcome: string): Promise<number> {
  const text = await (await createService(deps).request("/metrics")).text();
  const line = text.split("\n").find((l) =>
    l.startsWith(`provider_attempts_total{provider="${provider}",outcome="${outcome}"} `)
  );
  return line ? Number(line.split(" ").pop()) : 0;
}

dbTest(
  "a message whose first account answers 503 is sent through the second at once, its attempts recorded",
  async () => {
    await using s = await twilioThenVonage({ [FIRST]: UNAVAILABLE });
    const { first, second, t } = s;
    const before = await attemptsMetric(t.deps, "vonage", "sent");
    const unavailable = await attemptsMetric(t.deps, "twilio", "temporary");

    await t.run();

    assert.equal(first.server.messages.length, 0);
    assert.equal(second.server.messages.length, 1, "sent once, by the second account");
    assert.equal(t.fallback.server.requests.length, 0, "the default provider is not asked");
    const row = await t.row();
    assert.equal(row.status, "sent");
    assert.equal(row.provider, "vonage");
    assert.equal(row.handed_account, t.ids[1], "the account that sent it");
    assert.equal(row.handed_at, null);
    assert.deepEqual(
      row.attempts.map((a: Record<string, unknown>) => [a.account, a.provider, a.outcome]),
      [[t.ids[0], "twilio", "temporary"], [t.ids[1], "vonage", "sent"]],
    );
    assert.equal(row.attempts[1].provider_message_id, row.provider_message_id);
    assert.match(row.attempts[0].error, /Service unavailable/);
    assert.deepEqual(await triggerRow(t.deps, t.spec.trigger_id), counts("completed", 1, 1, 0, 0));
    assert.equal(await balanceMicros(t.deps.sql, t.team.id), toMicros(10) - SMS_MICROS, "charged once");
    assert.equal(await attemptsMetric(t.deps, "vonage", "sent"), before + 1);
    assert.equal(await attemptsMetric(t.deps, "twilio", "temporary"), unavailable + 1);
    // The execution's jobs list shows them too.
    const key = await createApiKey(t.deps.sql, t.team.id, "sk_live");
    const res = await createService(t.deps).request(`/api/v1/sms/executions/${t.spec.executions[0].id}/jobs`, {
      headers: { "X-API-Key": key },
    });
    const [job] = (await res.json()).jobs;
    assert.deepEqual(job.attempts, row.attempts);
  },
);

/**
 * Sends one SMS whose first account answers `answer`, which must end it there: failed, with neither
 * the second account nor the default asked. The message's row, and the team.
 */
async function failsAtTheFirst(answer: TwilioErrorBody) {
  await using s = await twilioThenVonage({ [FIRST]: answer });
  await s.t.run();
  assert.equal(s.second.server.requests.length, 0, "the second account is never asked");
  assert.equal(s.t.fallback.server.requests.length, 0, "nor the default provider");
  const row = await s.t.row();
  assert.equal(row.status, "failed");
  assert.equal(row.cost_micros, 0);
  return { row, t: s.t };
}

dbTest("a message sent through failover keeps its attempts when the write after the answer fails", async () => {
  await using s = await twilioThenVonage({ [FIRST]: UNAVAILABLE });
  const { second, t } = s;
  // An outage for one statement: the first one sent once the second account has the message.
  let tripped = false;
  const flaky = new Proxy(t.deps.sql, {
    apply(target, self, args) {
      if (!tripped && second.server.messages.length > 0) {
        tripped = true;
        throw new Error("connection lost");
      }
      return Reflect.apply(target as unknown as (...a: unknown[]) => unknown, self, args);
    },
  });
  await runJob(createWorkerContext({ ...t.deps, sql: flaky }), { ...t.job, id: crypto.randomUUID(), attempt: 0 });

  assert.ok(tripped);
  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.equal(row.provider, "vonage");
  assert.deepEqual(outcomesOf(row), ["temporary", "sent"], "recorded with its sent status, in one statement");
  assert.equal(row.attempts[1].provider_message_id, row.provider_message_id);
});

dbTest("a permanent refusal is not failed over: the message fails and is refunded", async () => {
  const { row, t } = await failsAtTheFirst(INVALID_NUMBER);
  assert.match(row.error, /Invalid 'To' Phone Number/);
  assert.deepEqual(outcomesOf(row), ["refused"]);
  assert.equal(await balanceMicros(t.deps.sql, t.team.id), toMicros(10), "refunded");
});

dbTest(
  "a timeout after the request left is not failed over by default: a second provider must not double-send",
  async () => {
    const { row } = await failsAtTheFirst(GATEWAY_TIMEOUT);
    assert.match(row.error, /may have sent it/);
    assert.deepEqual(outcomesOf(row), ["unknown"]);
  },
);

dbTest("a timeout fails over when the team allows it (failover_on_timeout)", async () => {
  await using s = await twilioThenVonage({ [FIRST]: GATEWAY_TIMEOUT }, { failoverOnTimeout: true });
  const { second, t } = s;

  await t.run();

  assert.equal(second.server.messages.length, 1);
  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => [a.provider, a.outcome]), [
    ["twilio", "unknown"],
    ["vonage", "sent"],
  ]);
});

dbTest("a team without channel accounts is sent through the default provider, with no attempts recorded", async () => {
  const t = await failoverSend([]);
  await using _ = t.fallback.server;
  await t.run();
  assert.equal(t.fallback.server.messages.length, 1);
  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.equal(row.attempts, null);
  assert.equal(row.handed_account, null);
});

dbTest("an account failing 5 times in a row is skipped, then probed after the cool-down and used again", async () => {
  const errors: Record<string, TwilioErrorBody> = {};
  await using s = await twilioThenVonage(errors);
  const { first, t } = s;
  let clock = Date.now();
  const now = () => clock;
  /** A send of one SMS to a new contact of the team, delivered at `now`: its message row. */
  const sendOne = async (phone: number) => {
    errors[`+1415555${phone}`] = UNAVAILABLE;
    const { spec, job } = await smsFanOut(t.deps, 1, { team: t.team, tag: `t${phone}`, phone });
    await runJob(createWorkerContext({ ...t.deps, now }), job);
    const [row] = await t.deps.sql`select status, attempts from messages where trigger_id = ${spec.trigger_id}`;
    return { status: row.status, outcomes: outcomesOf(row) };
  };
  // The first send (already to FIRST) opens nothing; the threshold counts failures in a row.
  errors[FIRST] = UNAVAILABLE;
  await t.run(0, now);
  for (let i = 1; i < BREAKER_THRESHOLD; i++) {
    assert.deepEqual(await sendOne(3000 + i), { status: "sent", outcomes: ["temporary", "sent"] });
  }
  const asked = first.server.requests.length;
  assert.equal(asked, BREAKER_THRESHOLD);

  assert.deepEqual(await sendOne(3100), { status: "sent", outcomes: ["skipped", "sent"] });
  assert.equal(first.server.requests.length, asked, "an open circuit's account is not asked");

  clock += BREAKER_COOLDOWN_MS;
  delete errors["+14155553200"]; // the first account has recovered
  const probe = await smsFanOut(t.deps, 1, { team: t.team, tag: "probe", phone: 3200 });
  await runJob(createWorkerContext({ ...t.deps, now }), probe.job);
  const [row] = await t.deps.sql`select status, attempts from messages where trigger_id = ${probe.spec.trigger_id}`;
  assert.equal(row.status, "sent");
  assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => [a.provider, a.outcome]), [["twilio", "sent"]]);
  assert.equal(first.server.messages.length, 1, "the probe went to the first account, which is used again");
});

/**
 * A send whose first pass dies mid-failover: the first account answers 503, the second (Twilio) is
 * handed the message and the pass never hears back. `taken` says whether the second account took it.
 * The third account (Vonage) and the default would take anything.
 */
async function diesMidFailover(taken: boolean) {
  const first = twilioAccount({ errors: { [FIRST]: UNAVAILABLE } });
  const held = Promise.withResolvers<void>();
  let holding = true;
  const second = twilioAccount({ hold: () => holding ? held.promise : undefined });
  const third = vonageAccount();
  const t = await failoverSend([first.input, second.input, third.input]);
  void t.run();
  for (let i = 0; i < 1_000 && second.server.requests.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(second.server.requests.length, 1, "the dying pass handed the message to the second account");
  const handed = await t.row();
  assert.equal(handed.handed_account, t.ids[1], "recorded before the hand-over");
  if (taken) {
    // The second account took it (its answer is what the dying pass never got): it is in its log.
    holding = false;
    const form = new URLSearchParams(second.server.requests[0].body);
    await second.client.send({
      id: crypto.randomUUID(),
      teamId: t.team.id,
      channel: "sms",
      to: form.get("To")!,
      from: form.get("From")!,
      text: form.get("Body")!,
    });
  }
  const later = () => Date.now() + HAND_OVER_WINDOW_MS;
  const cleanup = async () => {
    held.resolve();
    for (const s of [first.server, second.server, third.server, t.fallback.server]) await s.close();
  };
  return { t, first, second, third, later, cleanup };
}

dbTest("a message whose pass died after handing it to an account is settled through that account alone", async () => {
  const d = await diesMidFailover(true);
  try {
    await d.t.run(1, d.later);

    const row = await d.t.row();
    assert.equal(row.status, "sent");
    assert.equal(row.provider_message_id, d.second.server.messages[0].sid, "the sid in the second account's log");
    assert.equal(row.handed_account, d.t.ids[1]);
    assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => [a.account, a.outcome]), [
      [d.t.ids[0], "temporary"],
      [d.t.ids[1], "sent"],
    ]);
    assert.equal(d.first.server.requests.length, 1, "the first account is not asked again");
    assert.equal(d.third.server.requests.length, 0, "never sent through another account");
    assert.equal(d.t.fallback.server.requests.length, 0);
    assert.equal(d.second.server.messages.length, 1);
    assert.deepEqual(await triggerRow(d.t.deps, d.t.spec.trigger_id), counts("completed", 1, 1, 0, 0));
  } finally {
    await d.cleanup();
  }
});

dbTest("a kill during failover never sends one message through two providers", async () => {
  const d = await diesMidFailover(false);
  try {
    // Within the hand-over window, another pass leaves it alone; after it, only the second account is asked.
    await d.t.run(1);
    assert.equal((await d.t.row()).status, "pending");
    await d.t.run(2, d.later);

    const row = await d.t.row();
    assert.equal(row.status, "failed");
    assert.match(row.error, /may have been sent/);
    assert.equal(row.cost_micros, 0, "refunded");
    assert.equal(d.third.server.requests.length, 0, "never handed to another account");
    assert.equal(d.t.fallback.server.requests.length, 0);
    assert.equal(d.first.server.requests.length, 1);
    assert.equal(d.second.server.messages.length, 0);
    assert.deepEqual(row.attempts.map((a: Record<string, unknown>) => [a.account, a.outcome]), [
      [d.t.ids[0], "temporary"],
      [d.t.ids[1], "unknown"],
    ]);
  } finally {
    await d.cleanup();
  }
});

dbTest("a message a dead pass handed to an idempotent provider is handed to it again, and to no other", async () => {
  const first = twilioAccount({ errors: { [FIRST]: UNAVAILABLE } });
  // The service's default, keyed by message id (as Resend is): the first call is the dying pass's.
  const calls: OutboundMessage[] = [];
  const keyed: Provider = {
    name: "keyed",
    resendable: true,
    send(message) {
      calls.push(message);
      return calls.length === 1 ? new Promise(() => {}) : Promise.resolve({ providerMessageId: `keyed_${message.id}` });
    },
  };
  const t = await failoverSend([first.input], { defaultProvider: keyed });
  await using _a = first.server;
  await using _b = t.fallback.server;
  void t.run();
  for (let i = 0; i < 1_000 && calls.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal((await t.row()).handed_account, "default:sms");

  await t.run(1, () => Date.now() + HAND_OVER_WINDOW_MS);

  assert.equal(calls.length, 2);
  assert.equal(calls[1].id, calls[0].id, "the same message, which the provider takes once");
  assert.equal(first.server.requests.length, 1, "the first account is not asked again");
  const row = await t.row();
  assert.equal(row.status, "sent");
  assert.equal(row.provider, "keyed");
  assert.equal(row.provider_message_id, `keyed_${calls[0].id}`);
  assert.deepEqual(outcomesOf(row), ["temporary", "sent"]);
});
