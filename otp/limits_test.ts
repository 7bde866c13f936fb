import assert from "node:assert/strict";
import { Hono } from "hono";
import type { AppEnv } from "../shared/http/env.ts";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { clientIp } from "./limits.ts";
import { openSandbox, otpWorld, randomIp, sandboxSend } from "./testing.ts";

function retryAfter(res: Response): number {
  return Number(res.headers.get("retry-after"));
}

dbTest("more sends to one recipient than OTP_RECIPIENT_LIMIT in 5 minutes is 429 with Retry-After", async () => {
  let now = Date.UTC(2030, 0, 1, 10, 0, 0);
  const world = await otpWorld({ config: { OTP_RECIPIENT_LIMIT: 2 }, now: () => now });
  const email = randomEmail();
  const body = sandboxSend(["email"], { recipients: { email } });
  assert.equal((await world.post("/send", body)).status, 200);
  now += 60_000;
  assert.equal((await world.post("/send", { ...body, recipients: { email: email.toUpperCase() } })).status, 200);
  const refused = await world.post("/send", body);
  assert.equal(refused.status, 429);
  assert.deepEqual(await refused.json(), {
    statusCode: 429,
    message: "Too many OTP requests for this recipient",
    error: "Too Many Requests",
    code: "rate_limit_exceeded",
  });
  assert.equal(retryAfter(refused), 240);
  // Another recipient is not limited; the same one is again in the next window.
  assert.equal((await world.post("/send", sandboxSend(["email"]))).status, 200);
  now += 4 * 60_000;
  assert.equal((await world.post("/send", body)).status, 200);
});

dbTest("more sends from one client IP than OTP_IP_LIMIT_PER_HOUR is 429", async () => {
  const world = await otpWorld({ config: { OTP_IP_LIMIT_PER_HOUR: 3 } });
  for (let i = 0; i < 3; i++) assert.equal((await world.post("/send", sandboxSend(["sms"]))).status, 200);
  const refused = await world.post("/send", sandboxSend(["sms"]));
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).message, "Too many OTP requests from this IP address");
  assert.ok(retryAfter(refused) > 0 && retryAfter(refused) <= 3600);
  assert.equal((await world.post("/send", sandboxSend(["sms"]), { ip: randomIp() })).status, 200);
});

dbTest("more active sessions than OTP_ACTIVE_SESSION_LIMIT is 429 until one is verified or expires", async () => {
  let now = Date.UTC(2030, 0, 1, 10, 0, 0);
  const world = await otpWorld({ config: { OTP_ACTIVE_SESSION_LIMIT: 2 }, now: () => now });
  const first = await openSandbox(world, ["email"], { config: { expiry_minutes: 3 } });
  await openSandbox(world, ["email"], { config: { expiry_minutes: 10 } });
  const refused = await world.post("/send", sandboxSend(["email"]));
  assert.equal(refused.status, 429);
  assert.equal((await refused.json()).message, "Too many active OTP sessions");
  assert.equal(retryAfter(refused), 180);

  // A verified session is no longer active.
  await world.post("/verify", { session_token: first.token, otps: first.otps });
  const third = await openSandbox(world, ["email"], { config: { expiry_minutes: 1 } });
  assert.equal((await world.post("/send", sandboxSend(["email"]))).status, 429);
  // Neither is an expired one.
  now += 61_000;
  assert.equal((await world.post("/send", sandboxSend(["email"]))).status, 200);
  assert.ok(third.token);
});

dbTest("concurrent sends never take more places than OTP_ACTIVE_SESSION_LIMIT", async () => {
  // Rounds, because the race (a listing that misses sessions committing while it runs) is narrow.
  for (let round = 0; round < 10; round++) {
    const world = await otpWorld({ config: { OTP_ACTIVE_SESSION_LIMIT: 3 } });
    const answers = await Promise.all(Array.from({ length: 8 }, () => world.post("/send", sandboxSend(["email"]))));
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429]);
  }
});

dbTest("a locked session frees its place among the active ones", async () => {
  const world = await otpWorld({ config: { OTP_ACTIVE_SESSION_LIMIT: 1 } });
  const { token, otps } = await openSandbox(world, ["email"], { config: { max_attempts: 1 } });
  assert.equal((await world.post("/send", sandboxSend(["email"]))).status, 429);
  await world.post("/verify", { session_token: token, otps: { email: otps.email === "000000" ? "1" : "000000" } });
  assert.equal((await world.post("/send", sandboxSend(["email"]))).status, 200);
});

Deno.test("clientIp() takes the first X-Forwarded-For entry only behind a trusted proxy", async () => {
  for (const trust of [true, false]) {
    const app = new Hono<AppEnv>().get("/", (c) => c.text(clientIp(c, trust)));
    const headers = { "X-Forwarded-For": "203.0.113.7, 10.0.0.1" };
    // With a socket (as Deno.serve passes it), the socket's address wins unless the proxy is trusted.
    const env = { remoteAddr: { hostname: "192.0.2.1", port: 1, transport: "tcp" } };
    const withSocket = await (await app.request("/", { headers }, env)).text();
    assert.equal(withSocket, trust ? "203.0.113.7" : "192.0.2.1");
    // Called without a socket (tests), it falls back to the header, then 'unknown'.
    assert.equal(await (await app.request("/", { headers })).text(), "203.0.113.7");
    assert.equal(await (await app.request("/")).text(), "unknown");
    // A first entry that is no address is ignored: the socket's address counts.
    const garbage = { "X-Forwarded-For": "x".repeat(3_000) };
    assert.equal(await (await app.request("/", { headers: garbage }, env)).text(), "192.0.2.1");
  }
});
