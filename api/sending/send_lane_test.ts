import assert from "node:assert/strict";
import fc from "fast-check";
import { createService } from "../../main.ts";
import { setLogLevel } from "../../shared/log.ts";
import { metrics } from "../../shared/metrics.ts";
import { dbTest, testDeps } from "../../shared/testing.ts";
import { type SendingFixture, sendingFixture } from "../../worker/testing.ts";
import { SendLane } from "./send_lane.ts";

/** A request to build twice (a body is read once): method POST, JSON content type, `key` unless headers say otherwise. */
interface Case {
  name: string;
  path: string;
  /** The body's text, or a value to serialise. */
  body: unknown;
  headers?: Record<string, string | null>;
  /** Whether the lane answers it (else the app does). */
  lane: boolean;
}

function request(c: Case, key: string): Request {
  const text = typeof c.body === "string" ? c.body : JSON.stringify(c.body);
  // As a client's request arrives over HTTP: with its declared length.
  const headers = new Headers({
    "Content-Type": "application/json",
    "Content-Length": String(new TextEncoder().encode(text).length),
    "X-API-Key": key,
  });
  for (const [name, value] of Object.entries(c.headers ?? {})) {
    if (value === null) headers.delete(name);
    else headers.set(name, value);
  }
  return new Request(`http://localhost${c.path}`, { method: "POST", headers, body: text });
}

/** What must be the same whoever answers: status, header names, and the body without its fresh ids and times. */
async function shape(res: Response) {
  const headers = [...res.headers.keys()].sort();
  const text = await res.text();
  const masked = text
    .replace(/"(trigger_id|job_id|execution_id|request_id|created_at)":"[^"]*"/g, '"$1":"…"')
    .replace(/"delay_ms":\d+/g, '"delay_ms":0');
  return { status: res.status, headers, body: masked, retryAfter: res.headers.get("retry-after") !== null };
}

/** Answers `c` through the lane and, as a fresh request, through the app alone: both shapes, and who answered. */
async function both(f: SendingFixture, lane: SendLane, c: Case, key = f.keys.live) {
  const before = lane.counts.served;
  const viaLane = await shape(await lane.fetch(request(c, key)));
  const served = lane.counts.served > before;
  const viaApp = await shape(await f.app.fetch(request(c, key)));
  return { viaLane, viaApp, served };
}

async function fixture() {
  const f = await sendingFixture("enterprise");
  await f.fund(5);
  await f.template("sms", "hello", { body: "Hi {{name}}" });
  await f.template("email", "welcome", { subject: "Hi", body: "Hello {{first_name}}" });
  await f.template("whatsapp", "order", { body: "Order {{1}}", category: "UTILITY" });
  return { f, lane: new SendLane(f.app, f.deps) };
}

const sms = {
  template_key: "hello",
  recipient_type: "direct_sms",
  direct_phone: "+14155550123",
  variables: { name: "A" },
};
const SMS = "/api/v1/sms/send";

dbTest("the send lane serves an ordinary send on every send route, and the sends are delivered", async () => {
  const { f, lane } = await fixture();
  assert.deepEqual(lane.paths.sort(), [
    "/api/v1/messages/send",
    "/api/v1/push/send",
    "/api/v1/sms/send",
    "/api/v1/whatsapp/send",
  ]);
  const sends: Case[] = [
    { name: "sms", path: SMS, body: sms, lane: true },
    {
      name: "email",
      path: "/api/v1/messages/send",
      body: { recipient_type: "direct_email", direct_email: "a@example.com", template_key: "welcome" },
      lane: true,
    },
    {
      name: "whatsapp",
      path: "/api/v1/whatsapp/send",
      body: {
        template_key: "order",
        recipient_type: "direct_whatsapp",
        conversation_category: "UTILITY",
        direct_whatsapp: "+14155550124",
        variables: { "1": "7" },
      },
      lane: true,
    },
    {
      name: "push",
      path: "/api/v1/push/send",
      body: {
        recipient_type: "direct_push",
        direct_device_token: `lane_${"0".repeat(40)}`,
        direct_platform: "android",
        title: "T",
        body: "B",
      },
      lane: true,
    },
  ];
  const answered = () => metrics.httpRequests.get({ method: "POST", route: SMS, status: 201 });
  const counted = answered();
  for (const c of sends) {
    const served = lane.counts.served;
    const res = await lane.fetch(request(c, f.keys.live));
    assert.equal(lane.counts.served, served + 1, c.name);
    const { trigger } = await f.finished(res);
    assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 }, c.name);
  }
  // Counted in the metrics as the app counts it: by its route pattern and status.
  assert.equal(answered(), counted + 1);
  const outbox = await f.deps.sql<{ n: number }[]>`
    select count(*)::int as n from outbox_all where team_id = ${f.team.id}`;
  assert.equal(outbox[0].n, 4);
});

dbTest("the send lane answers as the app does, and hands the app what it does not serve", async () => {
  const { f, lane } = await fixture();
  const cases: Case[] = [
    { name: "ordinary", path: SMS, body: sms, lane: true },
    {
      name: "charset",
      path: SMS,
      body: sms,
      headers: { "Content-Type": "application/json; charset=utf-8" },
      lane: true,
    },
    { name: "team header", path: SMS, body: sms, headers: { "X-Team-ID": f.team.id.toUpperCase() }, lane: true },
    { name: "scheduled", path: SMS, body: { ...sms, trigger_at: "2999-01-01T00:00:00Z" }, lane: true },
    { name: "past schedule", path: SMS, body: { ...sms, scheduled_at: "2001-01-01T00:00:00Z" }, lane: true },
    { name: "unknown template", path: SMS, body: { ...sms, template_key: "nope" }, lane: true },
    { name: "not E.164", path: SMS, body: { ...sms, direct_phone: "0123" }, lane: true },
    {
      name: "unknown contact",
      path: SMS,
      body: { ...sms, recipient_type: "contact", contact_external_id: "x" },
      lane: true,
    },
    { name: "unknown field", path: SMS, body: { ...sms, extra: 1 }, lane: true },
    { name: "malformed JSON", path: SMS, body: "{", lane: false },
    { name: "schema refusal", path: SMS, body: { ...sms, recipient_type: "fax" }, lane: false },
    { name: "missing field", path: SMS, body: { recipient_type: "direct_sms" }, lane: false },
    { name: "__proto__ key", path: SMS, body: `{"__proto__":{},${JSON.stringify(sms).slice(1)}`, lane: false },
    { name: "NUL in text", path: SMS, body: { ...sms, campaign_name: "a\u0000b" }, lane: false },
    { name: "wrong team header", path: SMS, body: sms, headers: { "X-Team-ID": crypto.randomUUID() }, lane: false },
    { name: "no key", path: SMS, body: sms, headers: { "X-API-Key": null }, lane: false },
    { name: "unknown key", path: SMS, body: sms, headers: { "X-API-Key": "sk_live_nope" }, lane: false },
    { name: "publishable key", path: SMS, body: sms, headers: { "X-API-Key": f.keys.publishable }, lane: false },
    { name: "Origin", path: SMS, body: sms, headers: { Origin: "https://example.com" }, lane: false },
    {
      name: "form type",
      path: SMS,
      body: sms,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      lane: false,
    },
    { name: "no type", path: SMS, body: sms, headers: { "Content-Type": null }, lane: false },
    { name: "empty body", path: SMS, body: "", lane: false },
    { name: "no length (chunked)", path: SMS, body: sms, headers: { "Content-Length": null }, lane: false },
    { name: "length over 1 MiB", path: SMS, body: sms, headers: { "Content-Length": String(2 ** 21) }, lane: false },
    { name: "query", path: `${SMS}?a=1`, body: sms, lane: false },
    { name: "trailing slash", path: `${SMS}/`, body: sms, lane: false },
  ];
  for (const c of cases) {
    const { viaLane, viaApp, served } = await both(f, lane, c);
    assert.deepEqual(viaLane, viaApp, c.name);
    assert.equal(served, c.lane, `${c.name}: served by the lane`);
  }
  // Idempotent sends stay with the app: the second answer is the first one's replay.
  const idem = { name: "idempotent", path: SMS, body: sms, headers: { "Idempotency-Key": "k-1" }, lane: false };
  const first = await lane.fetch(request(idem, f.keys.live));
  const again = await lane.fetch(request(idem, f.keys.live));
  assert.equal(again.headers.get("Idempotent-Replayed"), "true");
  assert.equal((await again.json()).trigger_id, (await first.json()).trigger_id);
  // A test key is served too (sandbox: outbox only).
  const sandbox = await both(f, lane, { name: "test key", path: SMS, body: sms, lane: true }, f.keys.test);
  assert.deepEqual(sandbox.viaLane, sandbox.viaApp);
  assert.equal(sandbox.served, true);
});

dbTest(
  "the send lane refuses what the wallet cannot pay and what the rate limit does not allow, as the app does",
  async () => {
    const deps = await testDeps({ RATE_LIMIT_PRO: 3 });
    const f = await sendingFixture("pro");
    const app = createService(deps);
    const lane = new SendLane(app, deps);
    await f.template("sms", "hello", { body: "Hi {{name}}" });
    const poor = await both({ ...f, app }, lane, { name: "unfunded", path: SMS, body: sms, lane: true });
    assert.equal(poor.viaLane.status, 400);
    assert.match(poor.viaLane.body, /Insufficient wallet balance/);
    assert.deepEqual(poor.viaLane, poor.viaApp);
    // The test key's limit (3 an hour): two sends by the lane and one by the app, then a 429 from each.
    const ordinary = { name: "ordinary", path: SMS, body: sms, lane: true };
    const remaining = [];
    for (const fetch of [lane.fetch, app.fetch, lane.fetch]) {
      const res = await fetch(request(ordinary, f.keys.test));
      assert.equal(res.status, 201);
      remaining.push(res.headers.get("X-RateLimit-Remaining"));
    }
    assert.deepEqual(remaining, ["2", "1", "0"]);
    const over = await both({ ...f, app }, lane, { name: "over", path: SMS, body: sms, lane: true }, f.keys.test);
    assert.equal(over.viaLane.status, 429);
    assert.equal(over.viaLane.retryAfter, true);
    assert.deepEqual(over.viaLane, over.viaApp);
  },
);

dbTest("any SMS send body gets the same answer from the lane as from the app", async () => {
  const { f, lane } = await fixture();
  const text = fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom("hello", "+14155550123", "0123", "", "2999-01-01T00:00:00Z"),
  );
  const value = fc.oneof(
    text,
    fc.integer(),
    fc.constant(null),
    fc.boolean(),
    fc.array(text, { maxLength: 2 }),
    fc.dictionary(text, text, { maxKeys: 2 }),
  );
  // Mostly values the schema takes, so that many bodies get past it to the route's own checks.
  const given = (...likely: unknown[]) =>
    fc.oneof({ arbitrary: fc.constantFrom(...likely), weight: 12 }, { arbitrary: value, weight: 1 });
  const field = (...likely: unknown[]) => fc.option(given(...likely), { nil: undefined, freq: 2 });
  const body = fc.record({
    template_key: given("hello", "nope"),
    recipient_type: given("direct_sms", "contact", "tag", "all"),
    direct_phone: field("+14155550123", "+447700900123", "123"),
    direct_sms: field("+14155550124"),
    contact_external_id: field("c-1"),
    tag: field("vip", ["vip"]),
    variables: field({ name: "A" }, ["1"]),
    message_category: field("transactional", "promotional"),
    trigger_at: field("2999-01-01T00:00:00Z", "2001-01-01T00:00:00Z", "soon"),
  }, { requiredKeys: ["template_key", "recipient_type"] });
  let served = 0;
  await fc.assert(
    fc.asyncProperty(body, async (b) => {
      const c = { name: JSON.stringify(b), path: SMS, body: b, lane: true };
      const result = await both(f, lane, c, f.keys.test);
      if (result.served) served++;
      assert.deepEqual(result.viaLane, result.viaApp);
    }),
    { numRuns: 150, seed: 3 },
  );
  // Not a property that holds because the lane hands everything over: it served a share of the bodies.
  assert.ok(served >= 60, `the lane served ${served} of 150 bodies`);
});

dbTest("a middleware the send lane does not know in front of a send route stops the service", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  app.use("/api/v1/sms/*", async function audit(_c, next) {
    await next();
  });
  assert.throws(() => new SendLane(app, deps), /does not know what runs on POST \/api\/v1\/sms\/send/);
});

dbTest("a key look-up that fails is answered by the lane as by the app: a 500 in Shape A", async () => {
  const { f } = await fixture();
  const failing = { ...f.deps, keys: { get: () => Promise.reject(new Error("database unreachable")) } } as never;
  const app = createService(failing);
  const lane = new SendLane(app, failing);
  setLogLevel("silent");
  const { viaLane, viaApp } = await both({ ...f, app }, lane, { name: "failing", path: SMS, body: sms, lane: true });
  assert.equal(viaLane.status, 500);
  assert.match(viaLane.body, /"message":"Internal server error"/);
  assert.deepEqual(viaLane, viaApp);
});

/** Posts `body` to `path` over a real socket and answers the raw head of the HTTP/1.1 answer. */
async function rawPost(port: number, path: string, body: string, headers: Record<string, string>): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const head = [
    `POST ${path} HTTP/1.1`,
    "Host: localhost",
    "Connection: close",
    "Content-Type: application/json",
    `Content-Length: ${new TextEncoder().encode(body).length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  await conn.write(new TextEncoder().encode(`${head.join("\r\n")}\r\n\r\n${body}`));
  const answer = await new Response(conn.readable).text();
  return answer.slice(0, answer.indexOf("\r\n\r\n"));
}

dbTest("on the wire, the lane's answers name their headers as the app's do, a 429's too", async () => {
  const deps = await testDeps({ RATE_LIMIT_PRO: 2 });
  const f = await sendingFixture("pro");
  const app = createService(deps);
  const lane = new SendLane(app, deps);
  await f.template("sms", "hello", { body: "Hi {{name}}" });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, lane.fetch);
  // An Idempotency-Key sends a request through the app. The test key's limit is 2 an hour.
  const post = (viaApp: boolean) =>
    rawPost(server.addr.port, SMS, JSON.stringify(sms), {
      "X-API-Key": f.keys.test,
      ...(viaApp ? { "Idempotency-Key": crypto.randomUUID() } : {}),
    });
  // Names as written, case and all (HTTP/1.1 names are case-insensitive, but a client may not be).
  const names = (head: string) => head.split("\r\n").slice(1).map((line) => line.slice(0, line.indexOf(":"))).sort();
  try {
    const sent = [await post(false), await post(true)];
    const refused = [await post(false), await post(true)];
    assert.deepEqual(lane.counts, { served: 2, declined: 2 });
    for (const [status, [viaLane, viaApp]] of [[201, sent], [429, refused]] as const) {
      assert.match(viaLane, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.match(viaApp, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.deepEqual(names(viaLane), names(viaApp));
      for (const name of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "x-request-id"]) {
        assert.ok(names(viaLane).includes(name), `${name} in\n${viaLane}`);
      }
    }
    assert.ok(names(refused[0]).includes("retry-after"), refused[0]);
  } finally {
    await server.shutdown();
  }
});
