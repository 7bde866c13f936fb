import assert from "node:assert/strict";
import { dbTest, randomEmail } from "../shared/testing.ts";
import type { OtpSession } from "./session.ts";
import { openSandbox, otpWorld, randomPhone } from "./testing.ts";

function text(value: unknown): string {
  return JSON.stringify(value, (_, v) => typeof v === "bigint" ? v.toString() : v);
}

dbTest("no code can be found in KV or in Postgres (outside the outbox, which carries the message)", async () => {
  const world = await otpWorld();
  const live = await world.post("/send", {
    channels: ["email", "sms", "whatsapp"],
    recipients: { email: randomEmail(), sms: randomPhone(), whatsapp: randomPhone() },
    config: { otp_length: 8 },
    add_contact: true,
  });
  assert.equal(live.status, 200);
  const messages = await world.deps.sql<{ body: string }[]>`
    select body from outbox_all where team_id = ${world.team.id}`;
  const delivered = messages.map((m) => m.body.match(/\b(\d{8})\b/)![1]);
  const sandbox = await openSandbox(world, ["email", "sms"], { config: { otp_length: 8 } });
  const resent = await (await world.post("/resend", { session_token: sandbox.token })).json();
  const codes = [...delivered, ...Object.values(sandbox.otps), ...Object.values(resent.sandbox_otps as object)];
  assert.equal(codes.length, 7);
  // A verified session (and the contact it made) holds no code either.
  const opened = await live.json();
  await world.post("/verify", { session_token: opened.session_token, otps: { sms: delivered[1] } });
  for (const id of [opened.session_id, sandbox.body.session_id as string]) {
    assert.ok(await world.deps.otpSessions.get(world.team.id, id), "the sessions are stored (KV or Postgres)");
  }

  const kvText: string[] = [];
  for await (const entry of world.deps.kv.list({ prefix: [] })) kvText.push(text(entry.key) + text(entry.value));
  for (const code of codes) {
    assert.ok(!kvText.some((t) => t.includes(code)), `code ${code} found in KV`);
  }

  const tables = await world.deps.sql<{ table_name: string }[]>`
    select table_name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE'`;
  assert.ok(tables.some((t) => t.table_name === "contacts"));
  for (const { table_name } of tables) {
    const rows = await world.deps.sql<{ row: string }[]>`select t::text as row from ${world.deps.sql(table_name)} t`;
    const found = codes.filter((code) => rows.some((r) => r.row.includes(code)));
    if (table_name === "outbox") assert.deepEqual(found, delivered, "the outbox carries the delivered codes");
    else assert.deepEqual(found, [], `codes found in table ${table_name}`);
  }
});

dbTest("the stored session holds HMACs of the codes, the state, and its expiry", async () => {
  const world = await otpWorld();
  const { body } = await openSandbox(world, ["email", "sms"], { metadata: { a: 1 } });
  const entry = await world.deps.otpSessions.get<OtpSession>(world.team.id, body.session_id as string);
  const session = entry!.value;
  // Sorted: Postgres (jsonb) keeps object keys in an order of its own.
  assert.deepEqual(Object.keys(session.code_hashes).sort(), ["email", "sms"]);
  for (const hash of Object.values(session.code_hashes)) assert.match(hash!, /^[A-Za-z0-9+/]{43}=$/);
  assert.equal(new Date(session.expires_at).toISOString(), body.expires_at);
  assert.deepEqual(session.metadata, { a: 1 });
  assert.equal(session.team_id, world.team.id);
});
