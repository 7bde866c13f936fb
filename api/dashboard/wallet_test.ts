import assert from "node:assert/strict";
import { toMicros } from "../../shared/money.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { charge, topUp } from "../../shared/wallet.ts";
import { dashboardFixture, testUser } from "./testing.ts";
import { formatMoney } from "./wallet.tsx";

/** The descriptions of the ledger rows a page shows, top to bottom. */
function ledgerRows(html: string): string[] {
  return [...html.matchAll(/<td data-label="What for">([^<]*)/g)].map((m) => m[1].trim());
}

dbTest("the wallet page shows the balance and the ledger, newest first, to a member too", async () => {
  const { deps, team, member, visitor } = await dashboardFixture();
  await topUp(deps.sql, team.id, toMicros(20), "First top-up");
  await charge(deps.sql, team.id, toMicros(0.0079), "msg_1", "SMS to +14155550100");
  const v = visitor();
  await v.signIn(member.email);
  const page = await v.get("/dashboard/wallet");
  assert.equal(page.status, 200);
  assert.match(page.html, /<p class="big" id="balance">19\.9921 USD<\/p>/);
  assert.deepEqual(ledgerRows(page.html), ["SMS to +14155550100", "First top-up"]);
  assert.match(page.html, /−0\.0079 USD/);
  assert.match(page.html, /<code class="muted"> msg_1<\/code>/);
  assert.ok(page.html.includes(`/admin/v1/teams/${team.id}/wallet/topup`), "says how the operator tops up");
  assert.match(page.html, /href="\/dashboard\/wallet" aria-current="page"/);
});

dbTest("the ledger pages by keyset: 50 entries a page, then the older ones", async () => {
  const { deps, team, owner, visitor } = await dashboardFixture();
  for (let i = 1; i <= 53; i++) await topUp(deps.sql, team.id, toMicros(1), `Top-up ${i}`);
  const v = visitor();
  await v.signIn(owner.email);
  const first = await v.get("/dashboard/wallet");
  const rows = ledgerRows(first.html);
  assert.equal(rows.length, 50);
  assert.equal(rows[0], "Top-up 53");
  assert.equal(rows[49], "Top-up 4");
  const older = /href="(\/dashboard\/wallet\?after=\d+)" rel="next"/.exec(first.html)?.[1];
  assert.ok(older, "an Older link");
  const second = await v.get(older.replaceAll("&amp;", "&"));
  assert.deepEqual(ledgerRows(second.html), ["Top-up 3", "Top-up 2", "Top-up 1"]);
  assert.ok(!second.html.includes('rel="next"'));
  assert.match(second.html, /href="\/dashboard\/wallet">First page</);
  assert.equal(ledgerRows((await v.get("/dashboard/wallet?after=nonsense")).html)[0], "Top-up 53");
});

dbTest("one team never sees another team's balance or ledger, whatever the cursor", async () => {
  const { deps, team, visitor } = await dashboardFixture();
  await topUp(deps.sql, team.id, toMicros(123.45), "Theirs");
  const other = await testTeam(deps);
  const stranger = await testUser(deps, other.team.id, "owner");
  const v = visitor();
  await v.signIn(stranger.email);
  for (const path of ["/dashboard/wallet", "/dashboard/wallet?after=999999999999"]) {
    const page = await v.get(path);
    assert.equal(page.status, 200);
    assert.ok(!page.html.includes("Theirs") && !page.html.includes("123.45"), path);
  }
});

dbTest("a wallet without entries says to ask the operator for a first top-up", async () => {
  const { owner, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const page = await v.get("/dashboard/wallet");
  assert.match(page.html, /Nothing in the ledger yet/);
  assert.match(page.html, /Ask the operator for a first top-up/);
  assert.ok(!page.html.includes("<table"));
});

Deno.test("formatMoney() shows cents, and micro-dollars only when there are some", () => {
  assert.equal(formatMoney(5, "USD"), "5.00 USD");
  assert.equal(formatMoney(-0.0079, "USD"), "−0.0079 USD");
  assert.equal(formatMoney(0.000001, "USD"), "0.000001 USD");
});
