import assert from "node:assert/strict";
import { caller, contactsFixture, randomContact } from "../../api/contacts/testing.ts";
import { kvKeys } from "../kv.ts";
import { dbTest, testTeam } from "../testing.ts";

dbTest("idempotency() replays the first answer for the same key and body, creating one contact", async () => {
  const { call } = await contactsFixture();
  const body = randomContact();
  const headers = { "Idempotency-Key": crypto.randomUUID() };
  const first = await call("POST", "", body, headers);
  assert.equal(first.status, 201);
  assert.equal(first.headers.get("idempotent-replayed"), null);
  const again = await call("POST", "", body, headers);
  assert.equal(again.status, 201);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.ok(again.headers.get("x-request-id"), "a replay carries its own request id");
  assert.ok(again.headers.get("x-ratelimit-remaining"), "a replay carries the rate-limit headers");
  assert.deepEqual(again.body, first.body);
  const listed = await call("GET", `?email=${encodeURIComponent(body.email)}`);
  assert.equal(listed.body.data.length, 1);
  const without = await call("POST", "", body);
  assert.equal(without.status, 409, "without the key the second create is a duplicate");
});

dbTest("idempotency() answers 422 for the same key with another body, and creates nothing", async () => {
  const { call } = await contactsFixture();
  const headers = { "Idempotency-Key": crypto.randomUUID() };
  assert.equal((await call("POST", "", randomContact(), headers)).status, 201);
  const other = randomContact();
  const res = await call("POST", "", other, headers);
  assert.equal(res.status, 422);
  assert.equal(res.body.statusCode, 422);
  assert.equal(res.body.error, "Unprocessable Entity");
  assert.equal(res.body.code, "idempotency_key_reused");
  assert.equal((await call("GET", `?email=${encodeURIComponent(other.email)}`)).body.data.length, 0);
});

dbTest("idempotency() answers 409 while the first request with the key is still in flight", async () => {
  const { call, deps, team } = await contactsFixture();
  assert.equal((await call("GET", "")).status, 200); // the key is now cached: no query before the insert
  const key = crypto.randomUUID();
  const body = randomContact();
  let first: Promise<Awaited<ReturnType<typeof call>>> | undefined;
  await deps.sql.begin(async (tx) => {
    // Holds back inserts into contacts (and, on PGlite, the only connection) until this ends.
    await tx`lock table contacts in share mode`;
    first = call("POST", "", body, { "Idempotency-Key": key });
    for (let i = 0; i < 200; i++) {
      const entry = await deps.kv.get<{ state: string }>(kvKeys.idempotency(team.id, key));
      if (entry.value?.state === "in_flight") break;
      await new Promise((r) => setTimeout(r, 10));
    }
    const second = await call("POST", "", body, { "Idempotency-Key": key });
    assert.equal(second.status, 409);
    assert.equal(second.body.code, "idempotency_in_progress");
  });
  const done = await first!;
  assert.equal(done.status, 201);
  const replay = await call("POST", "", body, { "Idempotency-Key": key });
  assert.equal(replay.headers.get("idempotent-replayed"), "true");
  assert.equal(replay.body.id, done.body.id);
});

dbTest("idempotency() keys are per team: another team's same key creates its own contact", async () => {
  const { call, app, deps } = await contactsFixture();
  const other = caller(app, (await testTeam(deps)).keys.live);
  const headers = { "Idempotency-Key": "shared-key" };
  const body = randomContact();
  const mine = await call("POST", "", body, headers);
  const theirs = await other("POST", "", body, headers);
  assert.equal(theirs.status, 201);
  assert.equal(theirs.headers.get("idempotent-replayed"), null);
  assert.notEqual(theirs.body.id, mine.body.id);
});

dbTest("idempotency() does not keep a 409 duplicate answer: a retry runs again", async () => {
  const { call } = await contactsFixture();
  const body = randomContact();
  assert.equal((await call("POST", "", body)).status, 201);
  const headers = { "Idempotency-Key": crypto.randomUUID() };
  const duplicate = await call("POST", "", body, headers);
  assert.equal(duplicate.status, 409);
  const created = await call("GET", `?email=${encodeURIComponent(body.email)}`);
  await call("DELETE", `/${created.body.data[0].id}`);
  const retry = await call("POST", "", body, headers);
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get("idempotent-replayed"), null);
});

dbTest("idempotency() keeps and replays an answer larger than a KV value (a 1,000-contact bulk create)", async () => {
  const { call } = await contactsFixture();
  const contacts = Array.from(
    { length: 1_000 },
    () => ({ ...randomContact(), custom_fields: { note: "n".repeat(200) } }),
  );
  const headers = { "Idempotency-Key": crypto.randomUUID() };
  const first = await call("POST", "/bulk", { contacts }, headers);
  assert.equal(first.status, 200, JSON.stringify(first.body).slice(0, 200));
  assert.equal(first.body.summary.created_count, 1_000);
  assert.ok(JSON.stringify(first.body).length > 256 * 1024, "the answer is far over 64 KiB");
  const again = await call("POST", "/bulk", { contacts }, headers);
  assert.equal(again.status, 200);
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  assert.deepEqual(again.body, first.body);
});
