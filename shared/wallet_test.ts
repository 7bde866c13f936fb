import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "./testing.ts";
import { balanceMicros, chargeEach, ledger, topUp } from "./wallet.ts";

dbTest("chargeEach() records each entry with the balance after it, in one all-or-nothing charge", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  await topUp(deps.sql, team.id, 10_000);
  const entries = [
    { micros: 1_000, reference: "trigger:t", description: "3 sms messages" },
    { micros: 2_500, reference: "trigger:t", description: "WhatsApp MARKETING conversation opened by message a" },
    { micros: 400, reference: "trigger:t", description: "WhatsApp UTILITY conversation opened by message b" },
  ];
  assert.equal(await chargeEach(deps.sql, team.id, entries), 6_100);
  const charges = (await ledger(deps.sql, team.id)).filter((e) => e.kind === "charge").toReversed();
  assert.deepEqual(charges.map((e) => [e.description, e.amount, e.balance_after]), [
    ["3 sms messages", -0.001, 0.009],
    ["WhatsApp MARKETING conversation opened by message a", -0.0025, 0.0065],
    ["WhatsApp UTILITY conversation opened by message b", -0.0004, 0.0061],
  ]);
  // More than the balance: nothing is taken, nothing recorded.
  assert.equal(await chargeEach(deps.sql, team.id, [...entries, ...entries]), undefined);
  assert.equal(await balanceMicros(deps.sql, team.id), 6_100);
  assert.equal((await ledger(deps.sql, team.id)).length, 4);
});
