import assert from "node:assert/strict";
import { checkSchema, documentResolver } from "../harness/fuzz/schema_check.ts";
import { dbTest, jsonRequest } from "../shared/testing.ts";
import { openSandbox, otpWorld, wrong } from "./testing.ts";

const LOCKED = "Maximum attempts exceeded: session is locked due to too many failed attempts";

dbTest("verify with the right code answers 200 verified, mirrored in data, and the session is verified", async () => {
  const world = await otpWorld();
  const { token, otps, body } = await openSandbox(world, ["email"]);
  const res = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  assert.equal(res.status, 200);
  const result = {
    verified: true,
    verification_results: { email: { success: true } },
    verified_channels: ["email"],
    session_verified: true,
    attempts_remaining: 3,
  };
  assert.deepEqual(await res.json(), {
    success: true,
    ...result,
    all_channels_verified: true,
    session_id: body.session_id,
    expires_at: body.expires_at,
    metadata: {},
    data: result,
  });
});

dbTest("a wrong code's answer and a right code's both match the OpenAPI document", async () => {
  const world = await otpWorld();
  const doc = await (await world.app.request("/api/v1/openapi.json")).json();
  const schema = doc.paths["/api/v1/otp/verify"].post.responses["200"].content["application/json"].schema;
  const { token, otps } = await openSandbox(world, ["email"]);
  for (const email of [wrong(otps.email), otps.email]) {
    const res = await world.post("/verify", { session_token: token, otps: { email } });
    assert.equal(res.status, 200);
    assert.deepEqual(checkSchema(schema, await res.json(), documentResolver(doc)), [], email);
  }
});

dbTest("verify accepts `token` as an alias of session_token", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["sms"]);
  const res = await world.post("/verify", { token, otps: { sms: otps.sms } });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).session_verified, true);
});

dbTest("verify without a token or without otps is a 400 validation error", async () => {
  const world = await otpWorld();
  const noToken = await world.post("/verify", { otps: { email: "123456" } });
  assert.equal(noToken.status, 400);
  assert.deepEqual((await noToken.json()).message, ["session_token should not be empty"]);
  const { token } = await openSandbox(world, ["email"]);
  const noOtps = await world.post("/verify", { session_token: token, otps: {} });
  assert.equal(noOtps.status, 400);
  assert.deepEqual((await noOtps.json()).message, ["otps should not be empty"]);
  const neither = await world.post("/verify", {});
  assert.equal(neither.status, 400);
  assert.deepEqual(
    [...(await neither.json()).message].sort(),
    ["otps should not be empty", "session_token should not be empty"],
    "one answer lists every problem",
  );
});

dbTest("a wrong code is 200 verified false, 'Invalid OTP', with attempts_remaining, mirrored in data", async () => {
  const world = await otpWorld();
  const { token, otps, body } = await openSandbox(world, ["email"]);
  const res = await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  assert.equal(res.status, 200);
  const result = {
    verified: false,
    verification_results: { email: { success: false } },
    verified_channels: [],
    session_verified: false,
    attempts_remaining: 2,
  };
  assert.deepEqual(await res.json(), {
    success: false,
    message: "Invalid OTP",
    code: "invalid_otp",
    ...result,
    all_channels_verified: false,
    session_id: body.session_id,
    expires_at: body.expires_at,
    metadata: {},
    data: result,
  });
  // The attempt was used: the right code still verifies, with one attempt fewer.
  const right = await (await world.post("/verify", { session_token: token, otps: { email: otps.email } })).json();
  assert.deepEqual([right.verified, right.attempts_remaining], [true, 2]);
});

dbTest("a wrong code on a session already verified is 200 verified false and keeps the session verified", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"]);
  await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  const res = await world.post("/verify", { session_token: token, otps: { sms: wrong(otps.sms) } });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(
    [body.success, body.verified, body.message, body.session_verified, body.verified_channels, body.attempts_remaining],
    [false, false, "Invalid OTP", true, ["email"], 2],
  );
  assert.deepEqual(body.data.verified_channels, ["email"]);
});

dbTest("mode any: one of three channels verifies the session", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms", "whatsapp"]);
  const res = await world.post("/verify", { session_token: token, otps: { whatsapp: otps.whatsapp } });
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.deepEqual(body.verified_channels, ["whatsapp"]);
  assert.equal(body.session_verified, true);
  assert.equal(body.all_channels_verified, false);
});

dbTest("mode all: channels verify progressively over calls and the session only with the last", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms", "whatsapp"], { verification_mode: "all" });
  const first = await (await world.post("/verify", { session_token: token, otps: { sms: otps.sms } })).json();
  assert.deepEqual(first.verified_channels, ["sms"]);
  assert.equal(first.session_verified, false);
  assert.equal(first.all_channels_verified, false);
  const second = await (await world.post("/verify", {
    session_token: token,
    otps: { email: otps.email, whatsapp: otps.whatsapp },
  })).json();
  assert.deepEqual(second.verification_results, { email: { success: true }, whatsapp: { success: true } });
  assert.deepEqual(second.verified_channels, ["email", "sms", "whatsapp"]);
  assert.equal(second.session_verified, true);
  assert.equal(second.all_channels_verified, true);
  assert.equal(second.attempts_remaining, 3);
});

dbTest("mode all: a right and a wrong code in one call answer 200 and use one attempt", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"], { verification_mode: "all" });
  const res = await world.post("/verify", { session_token: token, otps: { email: otps.email, sms: wrong(otps.sms) } });
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual([body.success, body.verified, body.message], [true, true, undefined], "one right code verifies");
  assert.deepEqual(body.verification_results, { email: { success: true }, sms: { success: false } });
  assert.deepEqual(body.verified_channels, ["email"]);
  assert.equal(body.session_verified, false);
  assert.equal(body.attempts_remaining, 2);
});

dbTest("repeating an already verified channel changes nothing and costs no attempt", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"], { verification_mode: "all" });
  await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  for (let i = 0; i < 4; i++) {
    const again = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
    assert.equal(again.status, 200);
    const body = await again.json();
    assert.deepEqual(body.verified_channels, ["email"]);
    assert.equal(body.attempts_remaining, 3);
  }
  const last = await world.post("/verify", { session_token: token, otps: { sms: otps.sms } });
  assert.equal((await last.json()).session_verified, true);
});

dbTest("a channel not sent in the session is 400 and uses no attempt", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"]);
  for (const channel of ["sms", "push"]) {
    const res = await world.post("/verify", { session_token: token, otps: { [channel]: "123456" } });
    assert.equal(res.status, 400);
    const body = await res.json();
    assert.equal(body.message, `Channel '${channel}' was not sent in this session`);
    assert.equal(body.attempts_remaining, 3);
  }
  const ok = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  assert.equal((await ok.json()).attempts_remaining, 3);
});

dbTest("wrong codes spread over two channels lock the session at max_attempts", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"], { config: { max_attempts: 3 } });
  const a = await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  assert.equal((await a.json()).attempts_remaining, 2);
  const b = await world.post("/verify", { session_token: token, otps: { sms: wrong(otps.sms) } });
  assert.equal((await b.json()).attempts_remaining, 1);
  // The call that uses the last attempt is still answered as a wrong code, with none left.
  const c = await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  assert.equal(c.status, 200);
  const last = await c.json();
  assert.deepEqual(
    [last.success, last.verified, last.message, last.attempts_remaining, last.data.attempts_remaining],
    [false, false, "Invalid OTP", 0, 0],
  );
  // Locked: even the right code is refused now.
  const locked = await world.post("/verify", { session_token: token, otps: { sms: otps.sms } });
  assert.equal(locked.status, 400);
  assert.deepEqual(await locked.json(), {
    statusCode: 400,
    message: LOCKED,
    error: "Bad Request",
    code: "session_locked",
    attempts_remaining: 0,
  });
});

dbTest("a wrong code retried with its Idempotency-Key is replayed and uses one attempt", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"]);
  const headers = { "X-API-Key": world.keys.live, "X-Forwarded-For": world.ip, "Idempotency-Key": crypto.randomUUID() };
  const body = { session_token: token, otps: { email: wrong(otps.email) } };
  const first = await world.app.request("/api/v1/otp/verify", jsonRequest("POST", body, headers));
  const again = await world.app.request("/api/v1/otp/verify", jsonRequest("POST", body, headers));
  assert.deepEqual([first.status, again.status, again.headers.get("idempotent-replayed")], [200, 200, "true"]);
  assert.deepEqual(await again.json(), await first.json());
  const right = await (await world.post("/verify", { session_token: token, otps: { email: otps.email } })).json();
  assert.equal(right.attempts_remaining, 2);
});

dbTest("two wrong codes in one call use two attempts", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email", "sms"], { config: { max_attempts: 5 } });
  const res = await world.post("/verify", {
    session_token: token,
    otps: { email: wrong(otps.email), sms: wrong(otps.sms) },
  });
  const body = await res.json();
  assert.equal(res.status, 200);
  assert.equal(body.verified, false);
  assert.deepEqual(body.verification_results, { email: { success: false }, sms: { success: false } });
  assert.equal(body.attempts_remaining, 3);
});

dbTest("past expires_at verify answers 'OTP has expired', checked against the injected clock", async () => {
  let now = Date.UTC(2030, 0, 1, 12, 0, 0);
  const world = await otpWorld({ now: () => now });
  const { token, otps, body } = await openSandbox(world, ["email"], { config: { expiry_minutes: 2 } });
  assert.equal(body.expires_at, "2030-01-01T12:02:00.000Z");
  now += 2 * 60_000; // exactly at expiry: still valid
  const atExpiry = await world.post("/verify", { session_token: token, otps: { email: wrong(otps.email) } });
  assert.deepEqual([atExpiry.status, (await atExpiry.json()).message], [200, "Invalid OTP"]);
  now += 1;
  const res = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  assert.equal(res.status, 400);
  assert.deepEqual(await res.json(), {
    statusCode: 400,
    message: "OTP has expired",
    error: "Bad Request",
    code: "otp_expired",
    attempts_remaining: 2,
  });
});

dbTest("an unknown, forged or other team's token is 400 'Session not found'", async () => {
  const world = await otpWorld();
  const other = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"]);
  const forged = token.slice(0, -4) + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
  for (const [t, key] of [["nope", world.keys.live], [forged, world.keys.live], [token, other.keys.live]]) {
    const res = await world.post("/verify", { session_token: t, otps: { email: otps.email } }, { key });
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      statusCode: 400,
      message: "Session not found",
      error: "Bad Request",
      code: "session_not_found",
      attempts_remaining: 0,
    });
  }
  // The other team's attempt did not touch the session.
  const ok = await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  assert.equal((await ok.json()).attempts_remaining, 3);
});

dbTest("a token of any length that is not ours is 'Session not found', on verify and resend", async () => {
  const world = await otpWorld();
  const { token } = await openSandbox(world, ["email"]);
  const long = `${token.split(".")[0]}.${"A".repeat(2_100)}.${token.split(".")[2]}`;
  for (
    const [path, body] of [["/verify", { session_token: long, otps: { email: "123456" } }], ["/resend", {
      token: long,
    }]] as const
  ) {
    const res = await world.post(path, body);
    assert.equal(res.status, 400, path);
    assert.equal((await res.json()).message, "Session not found", path);
  }
});

dbTest("every verify answer carries attempts_remaining: 0 when there is no session to count", async () => {
  const world = await otpWorld();
  const cases: [Response, number, unknown][] = [
    [await world.post("/verify", { otps: { email: "123456" } }), 400, ["session_token should not be empty"]],
    [await world.post("/verify", { session_token: "x", otps: {} }), 400, ["otps should not be empty"]],
    [
      await world.post("/verify", { session_token: "x", otps: { email: "1" } }, { key: "sk_live_nope" }),
      401,
      "Invalid API key",
    ],
  ];
  for (const [res, status, message] of cases) {
    assert.equal(res.status, status);
    assert.equal(res.headers.get("content-type"), "application/json");
    const body = await res.json();
    assert.deepEqual([body.message, body.attempts_remaining], [message, 0]);
  }
});
