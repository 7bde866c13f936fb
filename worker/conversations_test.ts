import assert from "node:assert/strict";
import { triggerWarnings } from "../api/triggers/warnings.ts";
import type { Deps } from "../shared/deps.ts";
import { toMicros } from "../shared/money.ts";
import { type OutboundMessage, ProviderError } from "../shared/providers/types.ts";
import type { ConversationCategory } from "../shared/sending/conversations.ts";
import { newUlid } from "../shared/sending/ids.ts";
import { UNPAID_REASON, whatsappPrice } from "../shared/sending/pricing.ts";
import { dbTest, testConfig, testDeps, testTeam } from "../shared/testing.ts";
import { balanceMicros, ledger, topUp } from "../shared/wallet.ts";
import { deliver } from "./deliver.ts";
import type { Prepared } from "./prepare.ts";
import { withProvider } from "./sms_testing.ts";
import { sendingFixture } from "./testing.ts";

const UTILITY = whatsappPrice(testConfig(), "UTILITY");
const MARKETING = whatsappPrice(testConfig(), "MARKETING");

/** A WhatsApp send to `to` through the API, finished; answers its message row. */
async function sendWhatsApp(f: Awaited<ReturnType<typeof sendingFixture>>, to: string, category: ConversationCategory) {
  const res = await f.post("/api/v1/whatsapp/send", {
    template_key: category.toLowerCase(),
    recipient_type: "direct_whatsapp",
    direct_whatsapp: to,
    conversation_category: category,
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.equal(trigger.summary.sent, 1);
  const [row]: [{ id: string; cost_micros: number; note: string | null }] = await f.deps.sql`
    select id, cost_micros, note from messages where trigger_id = ${trigger_id}`;
  return { ...row, trigger_id };
}

async function whatsAppFixture() {
  const f = await sendingFixture();
  await f.fund(1);
  for (const category of ["UTILITY", "MARKETING"] as const) {
    await f.template("whatsapp", category.toLowerCase(), { body: "Hello", category });
  }
  return f;
}

dbTest("WhatsApp is charged once per conversation: the first message of a category to a number", async () => {
  const f = await whatsAppFixture();
  const first = await sendWhatsApp(f, "+447700900301", "UTILITY");
  assert.equal(first.cost_micros, UTILITY);
  const second = await sendWhatsApp(f, "+447700900301", "UTILITY");
  assert.equal(second.cost_micros, 0, "inside the 24-hour conversation: not charged again");
  assert.equal(second.note, `Inside the WhatsApp UTILITY conversation opened by message ${first.id}: not charged`);
  const jobs = await (await f.get(`/api/v1/whatsapp/executions/${second.trigger_id}/jobs`)).json();
  assert.equal(jobs.jobs[0].cost, 0);
  assert.equal(jobs.jobs[0].note, second.note);
  const marketing = await sendWhatsApp(f, "+447700900301", "MARKETING");
  assert.equal(marketing.cost_micros, MARKETING, "another category opens a conversation of its own");
  const elsewhere = await sendWhatsApp(f, "+447700900302", "UTILITY");
  assert.equal(elsewhere.cost_micros, UTILITY, "another number too");
  assert.equal(await balanceMicros(f.deps.sql, f.team.id), toMicros(1) - 2 * UTILITY - MARKETING);
  // The ledger has one charge per conversation, naming the message that opened it.
  const charges = (await ledger(f.deps.sql, f.team.id)).filter((e) => e.kind === "charge");
  assert.deepEqual(charges.map((e) => e.description).toReversed(), [
    `WhatsApp UTILITY conversation opened by message ${first.id}`,
    `WhatsApp MARKETING conversation opened by message ${marketing.id}`,
    `WhatsApp UTILITY conversation opened by message ${elsewhere.id}`,
  ]);
});

dbTest("WhatsApp conversation billing across the 24-hour boundary", async () => {
  const f = await whatsAppFixture();
  const first = await sendWhatsApp(f, "+447700900311", "UTILITY");
  // The conversation opened 23 hours ago: one hour of it is left.
  const age = async (hours: number) => {
    await f.deps.sql`update whatsapp_conversations set opened_at = opened_at - ${hours} * interval '1 hour',
      expires_at = expires_at - ${hours} * interval '1 hour' where team_id = ${f.team.id}`;
  };
  await age(23);
  assert.equal((await sendWhatsApp(f, "+447700900311", "UTILITY")).cost_micros, 0);
  // 24 hours after it opened, it is over: the next message opens a new one and is charged.
  await age(1);
  const after = await sendWhatsApp(f, "+447700900311", "UTILITY");
  assert.equal(after.cost_micros, UTILITY);
  assert.notEqual(after.id, first.id);
  assert.equal((await sendWhatsApp(f, "+447700900311", "UTILITY")).cost_micros, 0, "inside the new one");
  assert.equal(await balanceMicros(f.deps.sql, f.team.id), toMicros(1) - 2 * UTILITY);
});

dbTest("simultaneous WhatsApp sends to one number open exactly one conversation", async () => {
  const f = await whatsAppFixture();
  const c1 = await f.contact({ tags: ["family"], custom_fields: { phone: "+447700900321" } });
  await f.contact({ tags: ["family"], custom_fields: { phone: "+447700900321" } });
  const body = { template_key: "utility", conversation_category: "UTILITY" };
  const answers = await Promise.all([
    // Two contacts sharing a number: two messages of one pass.
    f.post("/api/v1/whatsapp/send", { ...body, recipient_type: "tag", tag: ["family"] }),
    ...Array.from(
      { length: 10 },
      () =>
        f.post("/api/v1/whatsapp/send", {
          ...body,
          recipient_type: "direct_whatsapp",
          direct_whatsapp: "+447700900321",
        }),
    ),
    f.post("/api/v1/whatsapp/send", { ...body, recipient_type: "contact", contact_external_id: c1.external_id }),
  ]);
  const triggers = await Promise.all(answers.map(async (res) => (await f.finished(res)).trigger));
  assert.equal(triggers.reduce((n, t) => n + t.summary.sent, 0), 13);
  const costs = await f.deps.sql<{ cost_micros: number }[]>`
    select cost_micros from messages where team_id = ${f.team.id} order by cost_micros desc`;
  assert.deepEqual(costs.map((r) => r.cost_micros), [UTILITY, ...Array(12).fill(0)]);
  assert.equal(await balanceMicros(f.deps.sql, f.team.id), toMicros(1) - UTILITY);
});

/** A WhatsApp message as the worker prepares it. */
function prepared(teamId: string, to: string, category: ConversationCategory, deps: Deps): Prepared {
  const id = newUlid();
  const message: OutboundMessage = { id, teamId, channel: "whatsapp", to, text: "Hello" };
  return {
    id,
    team_id: teamId,
    trigger_id: crypto.randomUUID(),
    execution_id: crypto.randomUUID(),
    channel: "whatsapp",
    batch_no: 0,
    template_key: "hello",
    recipient: to,
    to_address: to,
    contact_id: null,
    sandbox: false,
    message,
    cost: whatsappPrice(deps.config, category),
    conversation_category: category,
  };
}

/** A WhatsApp provider that refuses messages to `refused` for good and takes the rest. */
function refusing(refused: string) {
  return {
    name: "fake",
    resendable: true,
    send(m: OutboundMessage) {
      if (m.to === refused) return Promise.reject(new ProviderError("Not a WhatsApp number"));
      return Promise.resolve({ providerMessageId: `fake_${m.id}` });
    },
  };
}

dbTest("a conversation whose opening message the provider refused is closed with its refund", async () => {
  const base = await testDeps();
  const { team } = await testTeam(base);
  await topUp(base.sql, team.id, toMicros(1));
  const deps = withProvider(base, refusing("+447700900331"));
  const refused = prepared(team.id, "+447700900331", "UTILITY", deps);
  const result = await deliver(deps, [refused], { lastAttempt: true });
  assert.deepEqual([...result.statuses.values()], ["failed"]);
  assert.equal(await balanceMicros(deps.sql, team.id), toMicros(1), "refunded");
  // The next message to the number opens the conversation, and is charged.
  const ok = withProvider(base, refusing("none"));
  const next = prepared(team.id, "+447700900331", "UTILITY", ok);
  await deliver(ok, [next], { lastAttempt: true });
  assert.equal(await balanceMicros(deps.sql, team.id), toMicros(1) - UTILITY);
  const [row] = await deps.sql`select opened_by_message_id from whatsapp_conversations where team_id = ${team.id}`;
  assert.equal(row.opened_by_message_id, next.id);
});

dbTest("a message riding on a conversation the wallet cannot pay fails with its opener", async () => {
  const base = await testDeps();
  const { team } = await testTeam(base);
  await topUp(base.sql, team.id, MARKETING - 1);
  const deps = withProvider(base, refusing("none"));
  const opener = prepared(team.id, "+447700900341", "MARKETING", deps);
  const rider = prepared(team.id, "+447700900341", "MARKETING", deps);
  const result = await deliver(deps, [opener, rider], { lastAttempt: true });
  assert.deepEqual([...result.statuses.values()], ["failed", "failed"]);
  const rows = await deps.sql`select error, cost_micros, note from messages where team_id = ${team.id}`;
  assert.deepEqual(rows.map((r) => [r.error, r.cost_micros, r.note]), [[UNPAID_REASON, 0, null], [
    UNPAID_REASON,
    0,
    null,
  ]]);
  const [{ n }] = await deps.sql`select count(*)::int as n from whatsapp_conversations where team_id = ${team.id}`;
  assert.equal(n, 0, "no conversation stands without its charge");
  assert.equal(await balanceMicros(deps.sql, team.id), MARKETING - 1);
  // The rider's note ("inside the conversation opened by …") went with its conversation.
  for (const p of [opener, rider]) assert.deepEqual(await triggerWarnings(deps.sql, p.trigger_id), {});
});
