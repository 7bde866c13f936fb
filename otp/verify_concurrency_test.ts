import assert from "node:assert/strict";
import { dbTest } from "../shared/testing.ts";
import { otpHmac } from "./hmac.ts";
import { otpKeys } from "./keys.ts";
import type { OtpSession } from "./session.ts";
import { spyKv } from "../shared/engine/kv/spy_kv.ts";
import { openSandbox, otpWorld, wrong } from "./testing.ts";
import { signSessionToken } from "./token.ts";

const LOCKED = "Maximum attempts exceeded: session is locked due to too many failed attempts";

dbTest("two simultaneous right verifications verify the session once", async () => {
  let spy: ReturnType<typeof spyKv> | undefined;
  const world = await otpWorld({ kv: (kv) => (spy = spyKv(kv)).kv });
  const { token, otps, body } = await openSandbox(world, ["email"], { add_contact: true });
  spy!.reset();
  const calls = await Promise.all(
    [1, 2].map(() => world.post("/verify", { session_token: token, otps: { email: otps.email } })),
  );
  const answers = await Promise.all(calls.map((r) => r.json()));
  assert.deepEqual(calls.map((r) => r.status), [200, 200]);
  assert.ok(answers.every((a) => a.session_verified && a.attempts_remaining === 3));
  assert.equal(spy!.counts.writes, 1, "one call wrote the verification, the other found it done");
  const contacts = await world.deps.sql`select id from contacts where team_id = ${world.team.id}`;
  assert.equal(contacts.length, 1);
  const stored = await world.deps.otpSessions.get<OtpSession>(world.team.id, body.session_id as string);
  assert.ok(stored?.value.verified_at);
  assert.deepEqual(stored?.value.verified_channels, ["email"]);
});

dbTest("two simultaneous wrong codes cannot both use the last attempt", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"], { config: { max_attempts: 1 } });
  const calls = await Promise.all([
    world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } }),
    world.post("/verify", { session_token: token, otps: { sms: wrong(otps.sms) } }),
  ]);
  const answers = await Promise.all(calls.map(async (r) => [r.status, (await r.json()).message]));
  assert.deepEqual(answers.sort(), [[200, "Invalid OTP"], [400, LOCKED]]);
});

dbTest("two simultaneous calls on different channels both count (no lost update)", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms", "whatsapp"], { verification_mode: "all" });
  const calls = await Promise.all(
    (["email", "sms", "whatsapp"] as const).map((ch) =>
      world.post("/verify", { session_token: token, otps: { [ch]: otps[ch] } })
    ),
  );
  const answers = await Promise.all(calls.map((r) => r.json()));
  assert.deepEqual(calls.map((r) => r.status), [200, 200, 200]);
  assert.equal(answers.filter((a) => a.session_verified).length, 1);
  const last = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  assert.deepEqual((await last.json()).verified_channels, ["email", "sms", "whatsapp"]);
});

dbTest(
  "unknown session, other team, wrong code, expiry and lock read once with the same HMACs; only a wrong code writes",
  async () => {
    let now = Date.now();
    let spy: ReturnType<typeof spyKv> | undefined;
    const world = await otpWorld({ now: () => now, kv: (kv) => (spy = spyKv(kv)).kv });
    const other = await otpWorld();
    const keys = otpKeys(world.deps.config);
    const unknown = signSessionToken(keys.token, { sessionId: crypto.randomUUID(), teamId: world.team.id }, now);
    const live = await openSandbox(world, ["email"]);
    const expiring = await openSandbox(world, ["email"], { config: { expiry_minutes: 1 } });
    const locking = await openSandbox(world, ["email"], { config: { max_attempts: 1 } });
    await world.post("/verify", { session_token: locking.token, otps: { email: wrong(locking.otps.email) } });
    now += 61_000;

    const { sha256 } = otpHmac;
    let hmacs = 0;
    otpHmac.sha256 = (key, data) => (hmacs++, sha256(key, data));
    const work: Record<string, { status: number; message: string; gets: number; commits: number; hmacs: number }> = {};
    try {
      const cases: [string, string, string][] = [
        ["unknown session", unknown, world.keys.live],
        ["other team", live.token, other.keys.live],
        ["wrong code", live.token, world.keys.live],
        ["expired", expiring.token, world.keys.live],
        ["locked", locking.token, world.keys.live],
      ];
      for (const [name, token, key] of cases) {
        spy!.reset();
        hmacs = 0;
        const res = await world.post("/verify", { session_token: token, otps: { email: "000000" } }, { key });
        const { message } = await res.json();
        const { gets, commits } = spy!.counts;
        work[name] = { status: res.status, message, gets, commits, hmacs };
      }
    } finally {
      otpHmac.sha256 = sha256;
    }
    assert.equal(work["unknown session"].message, "Session not found");
    assert.equal(work["other team"].message, "Session not found");
    assert.equal(work["wrong code"].message, "Invalid OTP");
    assert.equal(work["expired"].message, "OTP has expired");
    assert.equal(work["locked"].message, LOCKED);
    for (const [name, w] of Object.entries(work)) {
      assert.equal(w.status, name === "wrong code" ? 200 : 400, name);
      assert.equal(w.hmacs, work["wrong code"].hmacs, `${name}: same HMAC work`);
      assert.equal(w.gets, 1, `${name}: one KV read`);
      // Only the wrong code changes the session (one attempt used); an error changes nothing.
      assert.equal(w.commits, name === "wrong code" ? 1 : 0, `${name}: commits`);
    }
    // The two answers that say the same ('Session not found') cannot be told apart by their work.
    assert.deepEqual(work["unknown session"], work["other team"]);
  },
);
