import assert from "node:assert/strict";
import { metrics } from "../shared/metrics.ts";
import { patchTeamSettings } from "../shared/team_settings.ts";
import { dbTest, testTeam } from "../shared/testing.ts";
import { toMicros } from "../shared/money.ts";
import { balanceMicros, topUp } from "../shared/wallet.ts";
import { GRACE_MS, numberPrefix } from "./fraud_guard.ts";
import { type OtpWorld, otpWorld, randomPhone, spyEnqueued } from "./testing.ts";

/** Numbers of one range (prefix 4477009), as a pumping run rents them. */
const PUMPED = "+4477009";
const MINUTE = 60_000;

interface GuardWorld extends OtpWorld {
  clock: { now: number };
  /** The `otp.fraud_blocked` events enqueued so far. */
  blocks(): { type: string; data: Record<string, unknown> }[];
  /** Sends one live SMS OTP; answers the status, the body and the number. */
  sms(to?: string, key?: string): Promise<{ status: number; body: Record<string, unknown>; to: string }>;
  outboxCount(): Promise<number>;
}

/** A team that judges after 10 sends (the rest default), with a webhook endpoint and a clock the test moves. */
async function guardWorld(): Promise<GuardWorld> {
  const clock = { now: Date.UTC(2030, 0, 1, 12) };
  let spy: ReturnType<typeof spyEnqueued> | undefined;
  const world = await otpWorld({
    config: { OTP_IP_LIMIT_PER_HOUR: 0, OTP_ACTIVE_SESSION_LIMIT: 0 },
    now: () => clock.now,
    kv: (kv) => (spy = spyEnqueued(kv)).kv,
    committer: () => spy!.committer,
  });
  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { fraud_guard: { min_sends: 10 } } });
  await world.deps.sql`insert into webhook_endpoints ${
    world.deps.sql({ team_id: world.team.id, url: "https://hooks.example.com/otp", secret: "whsec_test" })
  }`;
  return {
    ...world,
    clock,
    blocks: () =>
      (spy!.enqueued as { type: string; deliveries?: { event: { type: string; data: Record<string, unknown> } }[] }[])
        .filter((job) => job.type === "webhook-deliver")
        .flatMap((job) => job.deliveries!.map((d) => d.event))
        .filter((event) => event.type === "otp.fraud_blocked"),
    async sms(to = randomPhone(PUMPED), key = world.keys.live) {
      const res = await world.post("/send", { channels: ["sms"], recipients: { sms: to } }, { key });
      return { status: res.status, body: await res.json(), to };
    },
    async outboxCount() {
      return (await world.deps.sql`select 1 from outbox_all where team_id = ${world.team.id}`).length;
    },
  };
}

/** The code of the latest SMS to `to`, read from the outbox. */
async function codeSentTo(world: OtpWorld, to: string): Promise<string> {
  const [message] = await world.deps.sql<{ body: string }[]>`
    select body from outbox_all where team_id = ${world.team.id} and to_address = ${to} order by created_at desc limit 1`;
  return /\b(\d{6})\b/.exec(message.body)![1];
}

async function sendMany(world: GuardWorld, count: number, prefix = PUMPED) {
  const sent = [];
  for (let i = 0; i < count; i++) {
    const send = await world.sms(randomPhone(prefix));
    assert.equal(send.status, 200, JSON.stringify(send.body));
    sent.push(send);
  }
  return sent;
}

Deno.test("numberPrefix() is the first 7 digits of an E.164 number", () => {
  assert.equal(numberPrefix("+14155550123"), "1415555");
  assert.equal(numberPrefix("+447700900123"), "4477009");
  assert.equal(numberPrefix("+3361"), "3361");
});

dbTest(
  "a pumping run is blocked once, emits one otp.fraud_blocked, and stays blocked until the cool-down",
  async () => {
    const world = await guardWorld();
    const blockedBefore = metrics.otpPrefixesBlocked.get();
    // Twelve sends to one range, nobody verifies; still inside the grace period, so not judged yet.
    const pumped = await sendMany(world, 12);
    assert.deepEqual(world.blocks(), []);

    world.clock.now += GRACE_MS + MINUTE;
    const balance = await balanceMicros(world.deps.sql, world.team.id);
    const refused = await world.sms();
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, "otp_fraud_suspected");
    assert.equal(refused.body.statusCode, 403);
    const until = new Date(world.clock.now + 60 * MINUTE).toISOString();
    assert.equal(
      refused.body.message,
      `Cannot send OTP: numbers starting +4477009 are temporarily blocked for suspected SMS pumping until ${until}`,
    );
    assert.deepEqual(world.blocks().map((e) => e.data), [
      { team_id: world.team.id, prefix: "+4477009", sends: 12, verifications: 0, blocked_until: until },
    ]);
    assert.equal(metrics.otpPrefixesBlocked.get() - blockedBefore, 1);

    // Resends of the range's sessions opened before, and later sends to it: refused, no second
    // event, nothing sent or charged.
    const resend = await world.post("/resend", { session_token: pumped[0].body.session_token });
    assert.equal(resend.status, 403);
    assert.equal((await resend.json()).code, "otp_fraud_suspected");
    world.clock.now += 58 * MINUTE;
    for (let i = 0; i < 3; i++) assert.equal((await world.sms()).body.code, "otp_fraud_suspected");
    assert.equal(world.blocks().length, 1);
    assert.equal(await world.outboxCount(), 12);
    assert.equal(await balanceMicros(world.deps.sql, world.team.id), balance);

    // Another range of the team, and another team in the same range, are not concerned.
    assert.equal((await world.sms(randomPhone("+4477008"))).status, 200);
    const other = await testTeam(world.deps);
    await topUp(world.deps.sql, other.team.id, toMicros(1));
    assert.equal((await world.sms(randomPhone(PUMPED), other.keys.live)).status, 200);

    // The cool-down over (and the window empty), the range sends again.
    world.clock.now += 3 * MINUTE;
    assert.equal((await world.sms()).status, 200);
    assert.equal(world.blocks().length, 1);
  },
);

dbTest("a legitimate burst of the same size, mostly verified, is never blocked", async () => {
  const world = await guardWorld();
  const sent = await sendMany(world, 12);
  for (const { body, to } of sent.slice(0, 10)) {
    const res = await world.post("/verify", {
      session_token: body.session_token,
      otps: { sms: await codeSentTo(world, to) },
    });
    assert.equal((await res.json()).verified, true);
  }
  world.clock.now += GRACE_MS + MINUTE;
  await sendMany(world, 12);
  world.clock.now += GRACE_MS + MINUTE;
  assert.equal((await world.sms()).status, 200);
  assert.deepEqual(world.blocks(), []);
});

dbTest("a burst too fast for the grace period is judged once it reaches ten times min_sends", async () => {
  const world = await guardWorld();
  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { fraud_guard: { min_sends: 3 } } });
  await sendMany(world, 29);
  const thirtieth = await world.sms();
  assert.equal(thirtieth.body.code, "otp_fraud_suspected");
  assert.deepEqual(world.blocks().map((e) => [e.data.sends, e.data.verifications]), [[30, 0]]);
});

dbTest("sandbox and test-key sends are not counted, and a team can turn the guard off", async () => {
  const world = await guardWorld();
  for (let i = 0; i < 12; i++) {
    const res = await world.post("/send", {
      channels: ["sms"],
      recipients: { sms: randomPhone(PUMPED) },
      sandbox_mode: i % 2 === 0,
    }, { key: i % 2 === 0 ? world.keys.live : world.keys.test });
    assert.equal(res.status, 200);
  }
  world.clock.now += GRACE_MS + MINUTE;
  assert.equal((await world.sms()).status, 200);

  await patchTeamSettings(world.deps.sql, world.team.id, { otp: { fraud_guard: { enabled: false } } });
  await sendMany(world, 12);
  world.clock.now += GRACE_MS + MINUTE;
  assert.equal((await world.sms()).status, 200);
  assert.deepEqual(world.blocks(), []);
});
