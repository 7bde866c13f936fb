import assert from "node:assert/strict";
import { dbTest } from "../shared/testing.ts";
import { UNPAID_REASON } from "../shared/sending/pricing.ts";
import { sendingFixture } from "./testing.ts";

const SMS_MICROS = 7_500;

dbTest("200 simultaneous SMS sends to a tag charge exactly what the wallet covers and never below zero", async () => {
  const f = await sendingFixture("enterprise");
  await f.template("sms", "club", { body: "Club news for {{contact_first_name}}" });
  for (let i = 0; i < 5; i++) {
    await f.contact({ first_name: `M${i}`, tags: ["club"], custom_fields: { phone: `+1415555${3000 + i}` } });
  }
  const affordable = 130;
  await f.fund((affordable * SMS_MICROS) / 1e6);
  const topUpMicros = affordable * SMS_MICROS;
  const answers = await Promise.all(
    Array.from(
      { length: 200 },
      () => f.post("/api/v1/sms/send", { template_key: "club", recipient_type: "tag", tag: ["club"] }),
    ),
  );
  const bodies = await Promise.all(answers.map((res) => res.json()));
  const accepted = bodies.filter((_, i) => answers[i].status === 201);
  const refused = bodies.filter((_, i) => answers[i].status !== 201);
  // Once the wallet is empty a send may be refused up front; nothing else may go wrong.
  assert.ok(refused.every((b) => b.statusCode === 400 && /Insufficient wallet balance/.test(b.message)));
  assert.ok(accepted.length * 5 > affordable, "more messages accepted than the wallet covers");
  const triggers = await Promise.all(accepted.map((b) => f.waitForTrigger(b.trigger_id)));
  const sent = triggers.reduce((n, t) => n + t.summary.sent, 0);
  const failed = triggers.reduce((n, t) => n + t.summary.failed, 0);
  assert.equal(sent + failed, accepted.length * 5, "every recipient of every accepted send is accounted for");
  assert.equal(sent, affordable, "exactly the messages the wallet covers were sent");

  const [wallet]: [{ balance: number; ledger: number; charged: number; lowest: number }] = await f.deps.sql`
    select w.balance_micros as balance,
      (select sum(amount_micros)::bigint from wallet_ledger l where l.team_id = w.team_id) as ledger,
      (select coalesce(sum(-amount_micros), 0)::bigint from wallet_ledger l
        where l.team_id = w.team_id and l.kind in ('charge', 'refund')) as charged,
      (select min(balance_after_micros)::bigint from wallet_ledger l where l.team_id = w.team_id) as lowest
    from wallets w where w.team_id = ${f.team.id}`;
  assert.ok(wallet.balance >= 0 && wallet.lowest >= 0, "never below zero");
  assert.equal(wallet.balance, wallet.ledger, "balance = top-up − sum of charges (the ledger)");
  assert.equal(wallet.charged, sent * SMS_MICROS, "charged once per sent message");
  assert.equal(wallet.balance, topUpMicros - sent * SMS_MICROS);
  const unpaid = await f.deps.sql`
    select count(*)::int as n from messages where team_id = ${f.team.id} and status = 'failed' and error = ${UNPAID_REASON}`;
  assert.equal(unpaid[0].n, failed, "every failed message failed for want of money");
  const outboxed = await f.deps.sql`select count(*)::int as n from outbox_all where team_id = ${f.team.id}`;
  assert.equal(outboxed[0].n, sent, "only paid messages reached the provider");
});
