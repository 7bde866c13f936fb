import assert from "node:assert/strict";
import { dbTest } from "../shared/testing.ts";
import { HOUR, quietAroundNow, TimeTravel, until } from "./hold_testing.ts";
import { nextPass, NO_LONGER_RECIPIENT } from "./hold.ts";
import { nextTryDelay } from "../shared/backoff.ts";
import { type SendingFixture, sendingFixture } from "./testing.ts";
import { channelAccountsKey, putChannelAccounts } from "../shared/channel_accounts.ts";
import { toUsd } from "../shared/money.ts";
import { whatsappPrice } from "../shared/sending/pricing.ts";
import { randomHex, startFakeTwilio } from "../harness/fakes/fake_servers.ts";
import type { OutboundMessage, Provider } from "../shared/providers/types.ts";
import { withProvider } from "./sms_testing.ts";

/** The messages of a trigger's (only) execution as the jobs view shows them, by recipient. */
async function jobsOf(f: SendingFixture, triggerId: string) {
  const [execution] = await f.deps.sql<{ id: string }[]>`select id from executions where trigger_id = ${triggerId}`;
  const [row] = execution ? [] : await f.deps.sql<{ id: string }[]>`
    select execution_id as id from messages where trigger_id = ${triggerId} limit 1`;
  const id = execution?.id ?? row?.id;
  if (!id) return new Map();
  const res = await f.get(`/api/v1/sms/executions/${id}/jobs`);
  const body = await res.json();
  // deno-lint-ignore no-explicit-any
  return new Map<string, any>(body.jobs?.map((j: { recipient: string }) => [j.recipient, j]) ?? []);
}

async function triggerStatus(f: SendingFixture, triggerId: string): Promise<string> {
  return (await (await f.get(`/api/v1/triggers/${triggerId}`)).json()).status;
}

/**
 * A test with a funded team whose worker runs on a clock of the test's own (and sends through
 * `provider` instead of the outbox, when given).
 */
function quietTest(
  name: string,
  fn: (f: SendingFixture, clock: TimeTravel) => Promise<void>,
  provider?: Provider,
): void {
  dbTest(name, async () => {
    const clock = new TimeTravel();
    const f = await sendingFixture("pro", {}, (deps) => clock.around(provider ? withProvider(deps, provider) : deps));
    try {
      await f.fund(1);
      await fn(f, clock);
    } finally {
      await clock.close();
    }
  });
}

/** POST /sms/send of template `template_key` as promotional; the trigger id. */
async function sendPromotional(f: SendingFixture, body: Record<string, unknown>): Promise<string> {
  const sent = await f.send("/api/v1/sms/send", { ...body, message_category: "promotional" });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  return sent.body.trigger_id;
}

/** Waits until the delayed job of the pass that held messages waits for the clock. */
async function heldJobWaits(clock: TimeTravel): Promise<void> {
  await until(() => Promise.resolve(clock.waiting), (n) => n === 1, "the held pass's job waits");
}

quietTest(
  "quiet hours with contacts in two time zones: the one inside is held to the end, then sent",
  async (f, clock) => {
    await f.template("sms", "promo", { body: "Sale, {{contact_first_name}}" });
    const end = await quietAroundNow(f, clock, "UTC");
    await f.contact({
      first_name: "Aki",
      tags: ["vip"],
      custom_fields: { phone: "+819012345678", timezone: "Asia/Tokyo" },
    });
    await f.contact({
      first_name: "Ned",
      tags: ["vip"],
      custom_fields: { phone: "+12125550100", timezone: "America/New_York" },
    });
    const triggerId = await sendPromotional(f, { template_key: "promo", recipient_type: "tag", tag: ["vip"] });

    // New York's message goes now; Tokyo's waits, shown scheduled with the time it will go.
    const held = await until(() => jobsOf(f, triggerId), (jobs) => jobs.size === 2, "both messages recorded");
    assert.equal(held.get("+12125550100").status, "sent");
    assert.equal(held.get("+12125550100").scheduled_for, null);
    assert.equal(held.get("+819012345678").status, "scheduled");
    assert.equal(held.get("+819012345678").scheduled_for, new Date(end).toISOString());
    assert.equal(held.get("+819012345678").sent_at, null);
    assert.deepEqual((await f.outbox(triggerId)).map((m) => m.body), ["Sale, Ned"]);
    // Its batch comes back at the end of the hold; until then the trigger is not complete.
    await heldJobWaits(clock);
    assert.equal(await triggerStatus(f, triggerId), "processing");

    await clock.travel(end - clock.now() + 1_000);
    const trigger = await f.waitForTrigger(triggerId);
    assert.equal(trigger.status, "completed");
    assert.deepEqual(trigger.summary, { total_contacts: 2, sent: 2, failed: 0, filtered: 0 });
    const after = await jobsOf(f, triggerId);
    const tokyo = after.get("+819012345678");
    assert.equal(tokyo.status, "sent");
    assert.equal(tokyo.scheduled_for, new Date(end).toISOString());
    assert.ok(Date.parse(tokyo.sent_at) >= end, `sent at ${tokyo.sent_at}, not before ${tokyo.scheduled_for}`);
    assert.deepEqual((await f.outbox(triggerId)).map((m) => m.body).sort(), ["Sale, Aki", "Sale, Ned"]);
    // Charged once each, the held one when it was recorded.
    const [{ n }] = await f.deps.sql`select count(*)::int as n from messages where trigger_id = ${triggerId}`;
    assert.equal(n, 2);
  },
);

quietTest(
  "a held message whose contact opted out or left the audience meanwhile is filtered and refunded",
  async (f, clock) => {
    const funded = await f.balance();
    await f.template("sms", "promo", { body: "Sale" });
    await quietAroundNow(f, clock, "Asia/Tokyo");
    const aki = await f.contact({ tags: ["vip"], custom_fields: { phone: "+819012345678" } });
    const kei = await f.contact({ tags: ["vip"], custom_fields: { phone: "+819012345679" } });
    await f.contact({ tags: ["vip"], custom_fields: { phone: "+12125550100", timezone: "America/New_York" } });
    const triggerId = await sendPromotional(f, { template_key: "promo", recipient_type: "tag", tag: ["vip"] });
    await heldJobWaits(clock);
    const held = await jobsOf(f, triggerId);
    assert.deepEqual([...held.values()].map((j) => j.status).sort(), ["scheduled", "scheduled", "sent"]);

    await f.deps.sql`update contacts set is_unsubscribed = true where id = ${aki.id}`;
    await f.deps.sql`update contacts set tags = '{}' where id = ${kei.id}`;
    await clock.travel(2 * HOUR);
    const trigger = await f.waitForTrigger(triggerId);
    assert.deepEqual(trigger.summary, { total_contacts: 3, sent: 1, failed: 0, filtered: 2 });
    const jobs = await jobsOf(f, triggerId);
    assert.deepEqual(
      [jobs.get("+819012345678"), jobs.get("+819012345679")].map((j) => [j.status, j.error, j.cost]),
      [["filtered", "Contact is unsubscribed", 0], ["filtered", NO_LONGER_RECIPIENT, 0]],
    );
    // Only New York's message is paid for: the held ones were refunded.
    assert.equal(await f.balance(), funded - jobs.get("+12125550100").cost);
    assert.equal((await f.outbox(triggerId)).length, 1);
  },
);

quietTest("quiet hours hold no transactional message, and hold a direct send in the team's zone", async (f, clock) => {
  await f.template("sms", "note", { body: "Your order shipped" });
  const end = await quietAroundNow(f, clock, "Asia/Tokyo");
  await f.contact({ external_id: "aki", custom_fields: { phone: "+819012345678", timezone: "Asia/Tokyo" } });

  const transactional = await f.post("/api/v1/sms/send", {
    template_key: "note",
    recipient_type: "contact",
    contact_external_id: "aki",
  });
  const { trigger_id, trigger } = await f.finished(transactional);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.equal((await jobsOf(f, trigger_id)).get("+819012345678").scheduled_for, null);

  // A number has no zone of its own: the team's (Tokyo, inside the window) holds it.
  const directId = await sendPromotional(f, {
    template_key: "note",
    recipient_type: "direct_sms",
    direct_phone: "+12125550100",
  });
  const jobs = await until(
    () => jobsOf(f, directId),
    (j) => j.get("+12125550100")?.status === "scheduled",
    "the direct message scheduled",
  );
  assert.equal(jobs.get("+12125550100").scheduled_for, new Date(end).toISOString());
  await heldJobWaits(clock);
  assert.equal(await triggerStatus(f, directId), "processing");
  await clock.travel(end - clock.now() + 1_000);
  const done = await f.waitForTrigger(directId);
  assert.deepEqual(done.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
});

Deno.test("a pass comes back at its earliest hold, counted as a try only when a retry comes first", () => {
  const now = 1_000_000;
  assert.equal(nextPass({ pending: 0 }, 2, now), undefined, "nothing left");
  assert.deepEqual(nextPass({ pending: 0, heldUntil: now + 60_000 }, 2, now), { attempt: 2, delayMs: 60_000 });
  assert.deepEqual(nextPass({ pending: 0, heldUntil: now - 5 }, 0, now), { attempt: 0, delayMs: 0 }, "past: now");
  const retry = nextPass({ pending: 1, heldUntil: now + HOUR }, 0, now)!;
  assert.equal(retry.attempt, 1);
  assert.ok(retry.delayMs < HOUR && retry.delayMs >= nextTryDelay(0, undefined, () => 0));
  assert.deepEqual(nextPass({ pending: 1, heldUntil: now + 10 }, 3, now), { attempt: 3, delayMs: 10 });
});

/** The one message of a trigger, as recorded. */
async function messageOf(f: SendingFixture, triggerId: string) {
  const [row] = await f.deps.sql<
    { id: string; status: string; cost_micros: number; provider: string | null; handed_account: string | null }[]
  >`select id, status, cost_micros::int, provider, handed_account from messages where trigger_id = ${triggerId}`;
  return row;
}

/** POST /whatsapp/send of MARKETING template `promo`; the trigger id. */
async function sendMarketing(f: SendingFixture, body: Record<string, unknown>): Promise<string> {
  const sent = await f.send("/api/v1/whatsapp/send", {
    template_key: "promo",
    conversation_category: "MARKETING",
    ...body,
  });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  return sent.body.trigger_id;
}

const WHATSAPP_OPT_IN = { whatsapp: { promotional: true } };

quietTest(
  "a held WhatsApp MARKETING message refunded when its contact unsubscribed closes its conversation",
  async (f, clock) => {
    const funded = await f.balance();
    const price = whatsappPrice(f.deps.config, "MARKETING");
    await f.template("whatsapp", "promo", { body: "Sale", category: "MARKETING" });
    await quietAroundNow(f, clock, "Asia/Tokyo");
    const aki = await f.contact({ tags: ["vip"], phone: "+819012345678", preferences: WHATSAPP_OPT_IN });
    const heldId = await sendMarketing(f, { recipient_type: "tag", tag: ["vip"] });
    await heldJobWaits(clock);
    // Recorded while held: charged as the opener of the number's MARKETING conversation.
    const held = await messageOf(f, heldId);
    assert.deepEqual([held.status, held.cost_micros], ["pending", price]);
    const [opened] = await f.deps.sql`select opened_by_message_id from whatsapp_conversations
      where team_id = ${f.team.id}`;
    assert.equal(opened.opened_by_message_id, held.id);

    await f.deps.sql`update contacts set is_unsubscribed = true where id = ${aki.id}`;
    await clock.travel(2 * HOUR);
    const trigger = await f.waitForTrigger(heldId);
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 0, failed: 0, filtered: 1 });
    assert.equal(await f.balance(), funded, "refunded");

    // The quiet hours are over: the next MARKETING message to the number goes now, opens a
    // conversation of its own and is charged for it.
    const nextId = await sendMarketing(f, { recipient_type: "direct_whatsapp", direct_whatsapp: "+819012345678" });
    const next = await f.waitForTrigger(nextId);
    assert.deepEqual(next.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
    const sent = await messageOf(f, nextId);
    assert.equal(sent.cost_micros, price);
    assert.equal(await f.balance(), funded - toUsd(price));
    const [reopened] = await f.deps.sql`select opened_by_message_id from whatsapp_conversations
      where team_id = ${f.team.id}`;
    assert.equal(reopened.opened_by_message_id, sent.id);
  },
);

/** The service's default provider in a test where it must not be used: it records what it is given. */
const defaultProvider = {
  name: "default",
  resendable: true,
  sent: [] as OutboundMessage[],
  send(m: OutboundMessage) {
    defaultProvider.sent.push(m);
    return Promise.resolve({ providerMessageId: `default_${m.id}` });
  },
};

quietTest("a held WhatsApp message is sent at its hold's end through the team's channel account", async (f, clock) => {
  const credentials = { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
  await using twilio = startFakeTwilio(credentials);
  const key = await channelAccountsKey(f.deps.config.CHANNEL_ACCOUNTS_KEY);
  const { accounts: [account] } = await putChannelAccounts(
    f.deps.sql,
    key,
    { teamId: f.team.id, channel: "whatsapp", failoverOnTimeout: false },
    [{
      provider: "twilio",
      credentials: { account_sid: credentials.accountSid, auth_token: credentials.authToken, from: "+15005550006" },
      base_url: twilio.url,
    }],
  );
  await f.template("whatsapp", "promo", { body: "Sale", category: "MARKETING" });
  const end = await quietAroundNow(f, clock, "Asia/Tokyo");
  await f.contact({ tags: ["vip"], phone: "+819012345678", preferences: WHATSAPP_OPT_IN });
  const triggerId = await sendMarketing(f, { recipient_type: "tag", tag: ["vip"] });
  await heldJobWaits(clock);
  assert.equal((await messageOf(f, triggerId)).status, "pending");
  assert.equal(twilio.messages.length, 0, "nothing handed over during the quiet hours");

  await clock.travel(end - clock.now() + 1_000);
  const trigger = await f.waitForTrigger(triggerId);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual(
    twilio.messages.map((m) => [m.to, m.from, m.body]),
    [["whatsapp:+819012345678", "whatsapp:+15005550006", "Sale"]],
  );
  const sent = await messageOf(f, triggerId);
  assert.deepEqual([sent.status, sent.provider, sent.handed_account], ["sent", "twilio", account.id]);
  assert.equal(defaultProvider.sent.length, 0, "not through the service's default provider");
}, defaultProvider);
