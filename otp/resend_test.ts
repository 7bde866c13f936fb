import assert from "node:assert/strict";
import { toMicros } from "../shared/money.ts";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { balanceMicros, charge } from "../shared/wallet.ts";
import { openSandbox, otpWorld, randomPhone, wrong } from "./testing.ts";

dbTest("resend sends new codes on every channel, resets the attempts, extends expiry, keeps the token", async () => {
  let now = Date.UTC(2030, 0, 1, 9, 0, 0);
  const world = await otpWorld({ now: () => now });
  const { token, otps, body } = await openSandbox(world, ["email", "sms"], { config: { expiry_minutes: 5 } });
  assert.equal(body.expires_at, "2030-01-01T09:05:00.000Z");
  await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  await world.post("/verify", { session_token: token, otps: { sms: wrong(otps.sms) } });
  now += 4 * 60_000;

  const res = await world.post("/resend", { session_token: token });
  assert.equal(res.status, 200);
  const resent = await res.json();
  assert.deepEqual(Object.keys(resent).sort(), ["channels_sent", "expires_at", "message", "sandbox_otps", "success"]);
  assert.equal(resent.success, true);
  assert.equal(resent.message, "OTP resent successfully");
  assert.equal(resent.expires_at, "2030-01-01T09:09:00.000Z");
  assert.deepEqual(Object.keys(resent.sandbox_otps), ["email", "sms"]);
  assert.notDeepEqual(resent.sandbox_otps, otps);

  // The counter started again from max_attempts, and the old code is now wrong.
  const reset = await world.post("/verify", {
    session_token: token,
    otps: { email: wrong(resent.sandbox_otps.email) },
  });
  assert.equal((await reset.json()).attempts_remaining, 2);
  if (otps.email !== resent.sandbox_otps.email) {
    const old = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
    assert.equal(old.status, 200);
    const answer = await old.json();
    assert.deepEqual([answer.verified, answer.message, answer.attempts_remaining], [false, "Invalid OTP", 1]);
  }
  now += 4 * 60_000; // past the first expiry, before the new one
  const ok = await world.post("/verify", { token, otps: { sms: resent.sandbox_otps.sms } });
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).session_verified, true);
});

dbTest("resend of a verified session is 400 'Session already verified'", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"]);
  await world.post("/verify", { session_token: token, otps });
  const res = await world.post("/resend", { session_token: token });
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), {
    statusCode: 400,
    message: "Session already verified",
    error: "Bad Request",
    code: "session_verified",
  });
});

dbTest("resend of a locked session is 400 'Session is locked due to too many failed attempts'", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"], { config: { max_attempts: 1 } });
  await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  const res = await world.post("/resend", { token });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).message, "Session is locked due to too many failed attempts");
});

dbTest("resend of an unknown, expired or other team's session is 400 'Session not found'", async () => {
  let now = Date.now();
  const world = await otpWorld({ now: () => now });
  const other = await otpWorld();
  const { token } = await openSandbox(world, ["email"], { config: { expiry_minutes: 1 } });
  const unknown = await world.post("/resend", { session_token: "not-a-token" });
  const foreign = await world.post("/resend", { session_token: token }, { key: other.keys.live });
  now += 61_000;
  const expired = await world.post("/resend", { session_token: token });
  for (const res of [unknown, foreign, expired]) {
    assert.equal(res.status, 400);
    assert.equal((await res.json()).message, "Session not found");
  }
});

dbTest("resend without a token is 400 and with a bad key 401", async () => {
  const world = await otpWorld();
  const res = await world.post("/resend", {});
  assert.equal(res.status, 400);
  assert.deepEqual((await res.json()).message, ["session_token should not be empty"]);
  const bad = await world.post("/resend", { session_token: "x" }, { key: "sk_live_nope" });
  assert.equal(bad.status, 401);
});

dbTest("resend charges the delivery again (not the fee), and is 402 when the wallet cannot pay", async () => {
  const world = await otpWorld({ config: { PRICE_SMS_SEGMENT: 0.0075, PRICE_OTP_VERIFICATION: 0.005 }, balance: 1 });
  const sent = await (await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone() } })).json();
  const before = await balanceMicros(world.deps.sql, world.team.id);
  const res = await world.post("/resend", { session_token: sent.session_token });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).sandbox_otps, undefined);
  assert.equal(before - await balanceMicros(world.deps.sql, world.team.id), toMicros(0.0075));
  const outbox = await world.deps.sql`select body from outbox_all where team_id = ${world.team.id}`;
  assert.equal(outbox.length, 2);

  const left = await balanceMicros(world.deps.sql, world.team.id);
  await charge(world.deps.sql, world.team.id, left, "test", "empty the wallet");
  const poor = await world.post("/resend", { session_token: sent.session_token });
  assert.equal(poor.status, 402);
  assert.equal((await poor.json()).code, "insufficient_balance");
  assert.equal((await world.deps.sql`select body from outbox_all where team_id = ${world.team.id}`).length, 2);
});

dbTest("resends count against the recipient limit: 429 with Retry-After", async () => {
  const world = await otpWorld({ config: { OTP_RECIPIENT_LIMIT: 3 } });
  const { token } = await openSandbox(world, ["email"], { recipients: { email: randomEmail() } });
  assert.equal((await world.post("/resend", { session_token: token })).status, 200);
  assert.equal((await world.post("/resend", { session_token: token })).status, 200);
  const res = await world.post("/resend", { session_token: token });
  assert.equal(res.status, 429);
  assert.equal((await res.json()).message, "Too many OTP resends for this recipient");
  const retry = Number(res.headers.get("retry-after"));
  assert.ok(retry >= 1 && retry <= 300, `Retry-After ${retry}`);
});
