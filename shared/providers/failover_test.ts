import assert from "node:assert/strict";
import { ulid } from "ulid";
import { metrics } from "../metrics.ts";
import { CircuitBreakers } from "./circuit_breaker.ts";
import { type FailoverAccount, sendWithFailover } from "./failover.ts";
import { startFakeTwilio, type TwilioErrorBody } from "../../harness/fakes/fake_servers.ts";
import { createTwilioProvider } from "./twilio.ts";
import { randomSmsMessage } from "./provider_testing.ts";

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A Twilio account on a fake Twilio of its own: `errors` (by recipient) and `hold` are read at each request. */
function twilioAccount(
  id: string,
  options: { errors?: Record<string, TwilioErrorBody>; hold?: (to: string) => Promise<void> | undefined } = {},
) {
  const credentials = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
  const server = startFakeTwilio({ ...credentials, ...options });
  const account: FailoverAccount = {
    id,
    provider: createTwilioProvider({ ...credentials, baseUrl: server.url, timeoutMs: 300 }),
  };
  return { server, account };
}

const UNAVAILABLE: TwilioErrorBody = { status: 503, code: 20503, message: "Service unavailable" };
const INVALID_NUMBER: TwilioErrorBody = { status: 400, code: 21211, message: "Invalid 'To' Phone Number" };

Deno.test("sendWithFailover() sends through the second account at once when the first answers 503", async () => {
  const message = randomSmsMessage();
  const first = twilioAccount(`a-${ulid()}`, { errors: { [message.to]: UNAVAILABLE } });
  const second = twilioAccount(`b-${ulid()}`);
  await using _a = first.server;
  await using _b = second.server;
  const before = metrics.providerAttempts.get({ provider: "twilio", outcome: "temporary" });

  const result = await sendWithFailover(message, [first.account, second.account], { breakers: new CircuitBreakers() });

  assert.equal(result.sent?.account, second.account.id);
  assert.equal(result.sent?.providerMessageId, second.server.messages[0].sid);
  assert.deepEqual(result.attempts.map((a) => [a.account, a.outcome]), [
    [first.account.id, "temporary"],
    [second.account.id, "sent"],
  ]);
  assert.equal(first.server.messages.length, 0);
  assert.equal(second.server.messages.length, 1);
  assert.equal(metrics.providerAttempts.get({ provider: "twilio", outcome: "temporary" }), before + 1);
});

Deno.test("sendWithFailover() moves on when the first account's connection is refused", async () => {
  const closed = twilioAccount(`closed-${ulid()}`);
  await closed.server.close();
  const second = twilioAccount(`b-${ulid()}`);
  await using _b = second.server;

  const result = await sendWithFailover(randomSmsMessage(), [closed.account, second.account], {
    breakers: new CircuitBreakers(),
  });

  assert.deepEqual(result.attempts.map((a) => a.outcome), ["temporary", "sent"]);
  assert.equal(second.server.messages.length, 1);
});

Deno.test("sendWithFailover() does not fail over a permanent refusal", async () => {
  const message = randomSmsMessage();
  const first = twilioAccount(`a-${ulid()}`, { errors: { [message.to]: INVALID_NUMBER } });
  const second = twilioAccount(`b-${ulid()}`);
  await using _a = first.server;
  await using _b = second.server;

  const result = await sendWithFailover(message, [first.account, second.account], { breakers: new CircuitBreakers() });

  assert.equal(result.sent, undefined);
  assert.deepEqual(result.attempts.map((a) => a.outcome), ["refused"]);
  assert.equal(result.error?.providerCode, "21211");
  assert.equal(second.server.requests.length, 0, "the second account is never asked");
});

Deno.test("sendWithFailover() does not fail over a timeout by default, and does when the team allows it", async () => {
  const held = Promise.withResolvers<void>();
  const message = randomSmsMessage();
  const slow = twilioAccount(`slow-${ulid()}`, { hold: () => held.promise });
  const second = twilioAccount(`b-${ulid()}`);
  await using _a = slow.server;
  await using _b = second.server;
  try {
    const strict = await sendWithFailover(message, [slow.account, second.account], {
      breakers: new CircuitBreakers(),
    });
    assert.deepEqual(strict.attempts.map((a) => a.outcome), ["unknown"]);
    assert.equal(strict.error?.maybeAccepted, true);
    assert.equal(second.server.requests.length, 0, "a second provider must not double-send");

    const allowed = await sendWithFailover(message, [slow.account, second.account], {
      breakers: new CircuitBreakers(),
      failoverOnTimeout: true,
    });
    assert.deepEqual(allowed.attempts.map((a) => a.outcome), ["unknown", "sent"]);
    assert.equal(allowed.sent?.account, second.account.id);
  } finally {
    held.resolve();
  }
});

Deno.test("sendWithFailover() opens an account's circuit after N failures, skips it, then probes and closes it", async () => {
  let clock = 1_000_000;
  const now = () => clock;
  const breakers = new CircuitBreakers({ threshold: 2, cooldownMs: 60_000 });
  const errors: Record<string, TwilioErrorBody> = {};
  const first = twilioAccount(`a-${ulid()}`, { errors });
  const second = twilioAccount(`b-${ulid()}`);
  await using _a = first.server;
  await using _b = second.server;
  const send = async () => {
    const message = randomSmsMessage();
    errors[message.to] = UNAVAILABLE;
    return { message, result: await sendWithFailover(message, [first.account, second.account], { breakers, now }) };
  };

  for (let i = 0; i < 2; i++) {
    assert.deepEqual((await send()).result.attempts.map((a) => a.outcome), ["temporary", "sent"]);
  }
  assert.equal(breakers.state(first.account.id, clock), "open");
  const asked = first.server.requests.length;
  const skipped = await send();
  assert.deepEqual(skipped.result.attempts.map((a) => [a.account, a.outcome]), [
    [first.account.id, "skipped"],
    [second.account.id, "sent"],
  ]);
  assert.equal(first.server.requests.length, asked, "an open circuit's account is not asked");

  clock += 60_000;
  assert.equal(breakers.state(first.account.id, clock), "half-open");
  const message = randomSmsMessage(); // no error set for it: the first account has recovered
  const probe = await sendWithFailover(message, [first.account, second.account], { breakers, now });
  assert.deepEqual(probe.attempts.map((a) => [a.account, a.outcome]), [[first.account.id, "sent"]]);
  assert.equal(breakers.state(first.account.id, clock), "closed");
});

Deno.test("sendWithFailover() answers a temporary error when every account's circuit is open", async () => {
  const breakers = new CircuitBreakers({ threshold: 1 });
  const message = randomSmsMessage();
  const only = twilioAccount(`a-${ulid()}`, { errors: { [message.to]: UNAVAILABLE } });
  await using _a = only.server;
  await sendWithFailover(message, [only.account], { breakers });
  const result = await sendWithFailover(message, [only.account], { breakers });
  assert.deepEqual(result.attempts.map((a) => a.outcome), ["skipped"]);
  assert.equal(result.error?.temporary, true);
  assert.equal(result.error?.maybeAccepted, false);
  assert.match(result.error?.message ?? "", /every account's circuit is open/);
});

Deno.test("sendWithFailover() passes over an account that cannot carry the message and tells the caller before each hand-over", async () => {
  const second = twilioAccount(`b-${ulid()}`);
  await using _b = second.server;
  const other = twilioAccount(`x-${ulid()}`);
  await using _x = other.server;
  const never: FailoverAccount = { ...other.account, canSend: () => false };
  const handed: string[] = [];
  const result = await sendWithFailover(randomSmsMessage(), [never, second.account], {
    breakers: new CircuitBreakers(),
    beforeHandOver: (account) => Promise.resolve(void handed.push(account.id)),
  });
  assert.deepEqual(result.attempts.map((a) => a.account), [second.account.id]);
  assert.deepEqual(handed, [second.account.id]);
});

Deno.test("sendWithFailover() fails for good when no account can carry the message", async () => {
  const other = twilioAccount(`x-${ulid()}`);
  await using _x = other.server;
  const never: FailoverAccount = { ...other.account, canSend: () => false };
  for (const accounts of [[never], []]) {
    const result = await sendWithFailover(randomSmsMessage(), accounts, { breakers: new CircuitBreakers() });
    assert.deepEqual(result.attempts, []);
    assert.match(result.error!.message, /no account can carry this message/);
    assert.equal(result.error!.temporary, false, "trying again cannot help");
  }
  assert.equal(other.server.requests.length, 0);
});

Deno.test("sendWithFailover() gives a probe back when its hand-over cannot be recorded", async () => {
  let clock = 0;
  const breakers = new CircuitBreakers({ threshold: 1, cooldownMs: 1_000 });
  const only = twilioAccount(`a-${ulid()}`);
  await using _a = only.server;
  breakers.record(only.account.id, "temporary", clock);
  clock += 1_000;
  const now = () => clock;
  const unrecorded = () => Promise.reject(new Error("Postgres is away"));
  await assert.rejects(
    sendWithFailover(randomSmsMessage(), [only.account], { breakers, now, beforeHandOver: unrecorded }),
    /Postgres is away/,
  );
  assert.equal(only.server.requests.length, 0, "not handed over");
  const probe = await sendWithFailover(randomSmsMessage(), [only.account], { breakers, now });
  assert.deepEqual(probe.attempts.map((a) => a.outcome), ["sent"], "the next message probes it");
});
