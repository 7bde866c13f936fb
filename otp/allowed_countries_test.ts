import assert from "node:assert/strict";
import { metrics } from "../shared/metrics.ts";
import { patchTeamSettings } from "../shared/team_settings.ts";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { balanceMicros } from "../shared/wallet.ts";
import { type OtpWorld, otpWorld, randomPhone } from "./testing.ts";

/** A world whose team may send OTPs by phone to Great Britain only. */
async function britishOnly(): Promise<OtpWorld> {
  const world = await otpWorld();
  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { allowed_countries: ["GB"] } });
  return world;
}

async function nothingSentOrCharged(world: OtpWorld, balance: number): Promise<void> {
  assert.equal((await world.deps.sql`select 1 from outbox_all where team_id = ${world.team.id}`).length, 0);
  assert.equal(await balanceMicros(world.deps.sql, world.team.id), balance);
  const sessions = await world.deps.otpSessions.countActive(world.team.id, world.deps.now());
  assert.equal(sessions.count, 0, "no session stored");
}

dbTest("sendOtp() to a number outside the allowed countries is 403, and nothing is sent or charged", async () => {
  const world = await britishOnly();
  const balance = await balanceMicros(world.deps.sql, world.team.id);
  const refusedBefore = metrics.otpFraudBlocks.get({ reason: "country" });
  const bodies = [
    { channels: ["sms"], recipients: { sms: randomPhone() } },
    { channels: ["whatsapp"], recipients: { whatsapp: randomPhone("+33612") } },
    // One disallowed phone channel refuses the whole send, the email too.
    { channels: ["email", "sms"], recipients: { email: randomEmail("otp"), sms: randomPhone() } },
    { channels: ["sms", "whatsapp"], recipients: { sms: randomPhone("+447700"), whatsapp: randomPhone() } },
  ];
  for (const body of bodies) {
    const res = await world.post("/send", body);
    assert.equal(res.status, 403, JSON.stringify(body));
    const error = await res.json();
    assert.equal(error.statusCode, 403);
    assert.equal(error.code, "otp_country_not_allowed");
    assert.match(error.message, /^Cannot send OTP: (sms|whatsapp) numbers in (US|FR) are not allowed for this team$/);
  }
  await nothingSentOrCharged(world, balance);
  assert.equal(metrics.otpFraudBlocks.get({ reason: "country" }) - refusedBefore, bodies.length);
});

dbTest("sendOtp() sends to an allowed country, and email-only sends ignore the list", async () => {
  const world = await britishOnly();
  const sms = await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+447700") } });
  assert.equal(sms.status, 200);
  const email = await world.post("/send", { channels: ["email"], recipients: { email: randomEmail("otp") } });
  assert.equal(email.status, 200);
  // A recipient given for a channel not sent on is not judged.
  const unused = await world.post("/send", {
    channels: ["email"],
    recipients: { email: randomEmail("otp"), sms: randomPhone() },
  });
  assert.equal(unused.status, 200);
  assert.equal((await world.deps.sql`select 1 from outbox_all where team_id = ${world.team.id}`).length, 3);
});

dbTest("the list applies to sandbox sends too, and an empty list allows no phone at all", async () => {
  const world = await britishOnly();
  const sandbox = await world.post("/send", {
    channels: ["sms"],
    recipients: { sms: randomPhone() },
    sandbox_mode: true,
  });
  assert.equal(sandbox.status, 403);
  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { allowed_countries: [] } });
  const british = await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone("+447700") } });
  assert.equal((await british.json()).code, "otp_country_not_allowed");
  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { allowed_countries: null } });
  const any = await world.post("/send", { channels: ["sms"], recipients: { sms: randomPhone() } });
  assert.equal(any.status, 200);
});
