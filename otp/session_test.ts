import assert from "node:assert/strict";
import { applyVerification, attemptsRemaining, isActive, type OtpSession } from "./session.ts";

function session(overrides: Partial<OtpSession> = {}): OtpSession {
  return {
    id: "s",
    team_id: "t",
    channels: ["email", "sms"],
    recipients: { email: "a@example.com", sms: "+14155550123" },
    code_hashes: {},
    verified_channels: [],
    failed_attempts: {},
    max_attempts: 3,
    otp_length: 6,
    expiry_minutes: 10,
    expires_at: 1_000,
    created_at: 0,
    verified_at: null,
    verification_mode: "any",
    metadata: {},
    add_contact: false,
    contact: null,
    first_name: null,
    last_name: null,
    sandbox_mode: true,
    test: false,
    resend_count: 0,
    ...overrides,
  };
}

function message(v: ReturnType<typeof applyVerification>): string {
  return v.ok ? "ok" : v.error.message;
}

Deno.test("applyVerification() checks an unknown channel first, then the lock, then expiry", () => {
  const locked = session({ failed_attempts: { email: 2, sms: 1 } });
  assert.equal(
    message(applyVerification(locked, { push: true }, 2_000)),
    "Channel 'push' was not sent in this session",
  );
  assert.equal(
    message(applyVerification(locked, { email: true }, 2_000)),
    "Maximum attempts exceeded: session is locked due to too many failed attempts",
  );
  assert.equal(message(applyVerification(session(), { email: true }, 2_000)), "OTP has expired");
  assert.equal(message(applyVerification(null, { email: true }, 0)), "Session not found");
});

Deno.test("applyVerification() counts attempts per channel and the lock on their sum", () => {
  let s = session();
  for (const channel of ["email", "sms", "email"]) {
    const v = applyVerification(s, { [channel]: false }, 0);
    assert.ok(v.ok, "a wrong code is an answer, not an error");
    assert.deepEqual(v.results, { [channel]: { success: false } });
    s = v.next!;
  }
  assert.deepEqual(s.failed_attempts, { email: 2, sms: 1 });
  assert.equal(attemptsRemaining(s), 0);
  assert.equal(isActive(s, 0), false);
});

Deno.test("applyVerification() writes nothing when only verified channels are given again", () => {
  const s = session({ verified_channels: ["email"], verified_at: 5 });
  const v = applyVerification(s, { email: true }, 0);
  assert.ok(v.ok);
  assert.equal(v.next, undefined);
  assert.equal(v.newlyVerified, false);
});

Deno.test("applyVerification() in mode all verifies the session with the last channel only", () => {
  const s = session({ verification_mode: "all" });
  const first = applyVerification(s, { sms: true }, 7);
  assert.ok(first.ok && !first.newlyVerified && first.session.verified_at === null);
  const second = applyVerification(first.session, { email: true }, 8);
  assert.ok(second.ok && second.newlyVerified);
  assert.equal(second.session.verified_at, 8);
  assert.deepEqual(second.session.verified_channels, ["email", "sms"]);
});
