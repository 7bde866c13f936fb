import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "./testing.ts";
import { balanceMicros, charge, topUp } from "./wallet.ts";

dbTest("charge(): 200 simultaneous charges against a small wallet never take it below zero", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  await topUp(deps.sql, team.id, 10_000);
  const price = 75;
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) =>
      // Half alone, half inside a transaction (as the delivery pass charges).
      i % 2 === 0
        ? charge(deps.sql, team.id, price, "concurrency", "one")
        : deps.sql.begin((tx) => charge(tx, team.id, price, "concurrency", "one"))),
  );
  const paid = results.filter((r) => r !== undefined);
  assert.equal(paid.length, Math.floor(10_000 / price), "exactly as many charges as the balance covers");
  assert.ok(paid.every((balance) => balance! >= 0));
  const balance = await balanceMicros(deps.sql, team.id);
  assert.equal(balance, 10_000 - paid.length * price);
  const [ledger]: [{ total: number; charges: number; lowest: number }] = await deps.sql`
    select sum(amount_micros)::bigint as total, count(*) filter (where kind = 'charge')::int as charges,
      min(balance_after_micros)::bigint as lowest
    from wallet_ledger where team_id = ${team.id}`;
  assert.equal(ledger.total, balance, "the balance equals the sum of its ledger");
  assert.equal(ledger.charges, paid.length, "one ledger entry per charge that went through");
  assert.ok(ledger.lowest >= 0);
  // The balances after each charge are all different: no two charges read the same balance.
  assert.equal(new Set(paid).size, paid.length);
});
