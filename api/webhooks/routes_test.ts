import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { MAX_ID_LENGTH } from "../../shared/http/schemas.ts";
import { EVENT_TYPES } from "../../shared/webhook_events.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";

async function setup(allowPrivate = true) {
  const deps = await testDeps({ WEBHOOK_ALLOW_PRIVATE: allowPrivate });
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live };
  const call = (method: string, path: string, body?: unknown) =>
    app.request(`/api/v1/webhooks${path}`, jsonRequest(method, body, headers));
  return { deps, app, team, keys, headers, call };
}

dbTest("POST /webhooks answers 201 with the secret once; GET lists endpoints without secrets", async () => {
  const { call } = await setup();
  const res = await call("POST", "", {
    url: "http://127.0.0.1:9/in",
    events: ["message.delivered", "message.delivered"],
  });
  assert.equal(res.status, 201);
  const created = await res.json();
  assert.match(created.id, /^[0-9a-f-]{36}$/);
  assert.equal(created.url, "http://127.0.0.1:9/in");
  assert.deepEqual(created.events, ["message.delivered"]);
  assert.match(created.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.equal(created.is_active, true);
  assert.match(created.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  const all = await (await call("POST", "", { url: "http://127.0.0.1:9/all" })).json();
  assert.deepEqual(all.events, [...EVENT_TYPES]);

  const list = await call("GET", "");
  assert.equal(list.status, 200);
  const { data } = await list.json();
  assert.deepEqual(data.map((e: { id: string }) => e.id), [all.id, created.id]);
  assert.ok(data.every((e: Record<string, unknown>) => !("secret" in e)));
  const one = await (await call("GET", `/${created.id}`)).json();
  assert.equal(one.secret, undefined);
  assert.equal(one.url, created.url);
});

dbTest("POST /webhooks refuses an unknown event type, a missing url and a non-http scheme", async () => {
  const { call } = await setup();
  const bad = await call("POST", "", { url: "http://127.0.0.1:9/in", events: ["message.exploded"] });
  assert.equal(bad.status, 400);
  assert.match((await bad.json()).message[0], /^events\.0 must be one of: message\.sent, /);
  const missing = await call("POST", "", {});
  assert.deepEqual((await missing.json()).message, ["url should not be empty"]);
  const ftp = await call("POST", "", { url: "ftp://example.com/x" });
  assert.equal(ftp.status, 400);
  assert.deepEqual(await ftp.json(), {
    statusCode: 400,
    message: "url must use http or https",
    error: "Bad Request",
    code: "invalid_webhook_url",
  });
});

dbTest("POST /webhooks refuses loopback, private and link-local targets unless WEBHOOK_ALLOW_PRIVATE=1", async () => {
  const { call } = await setup(false);
  const cases: [string, string][] = [
    ["http://127.0.0.1:8000/hook", "url must not point to a loopback address"],
    ["http://[::1]/hook", "url must not point to a loopback address"],
    ["http://10.0.0.8/hook", "url must not point to a private address"],
    ["http://192.168.1.20/hook", "url must not point to a private address"],
    ["http://169.254.169.254/latest/meta-data", "url must not point to a link-local address"],
    ["http://localhost:3000/hook", "url must not point to a loopback or local address"],
  ];
  for (const [url, message] of cases) {
    const res = await call("POST", "", { url });
    assert.equal(res.status, 400, url);
    assert.equal((await res.json()).message, message, url);
  }
  const list = await (await call("GET", "")).json();
  assert.deepEqual(list.data, []);
});

dbTest("rotate-secret answers a new secret; delete answers {deleted, id} and then 404", async () => {
  const { call } = await setup();
  const created = await (await call("POST", "", { url: "http://127.0.0.1:9/in" })).json();
  const rotated = await call("POST", `/${created.id}/rotate-secret`);
  assert.equal(rotated.status, 200);
  const body = await rotated.json();
  assert.equal(body.id, created.id);
  assert.match(body.secret, /^whsec_/);
  assert.notEqual(body.secret, created.secret);

  const deleted = await call("DELETE", `/${created.id}`);
  assert.equal(deleted.status, 200);
  assert.deepEqual(await deleted.json(), { deleted: true, id: created.id });
  const again = await call("DELETE", `/${created.id}`);
  assert.equal(again.status, 404);
  assert.deepEqual(await again.json(), {
    statusCode: 404,
    message: "Webhook endpoint not found",
    error: "Not Found",
    code: "webhook_not_found",
  });
  assert.equal((await call("POST", `/${created.id}/rotate-secret`)).status, 404);
  assert.equal((await call("GET", `/${created.id}/deliveries`)).status, 404);
  assert.equal((await call("GET", "/not-a-uuid")).status, 404);
});

dbTest("a team cannot see or change another team's endpoint, and publishable keys are refused", async () => {
  const { deps, app, call, keys } = await setup();
  const created = await (await call("POST", "", { url: "http://127.0.0.1:9/in" })).json();
  const other = await testTeam(deps);
  const otherHeaders = { "X-API-Key": other.keys.live };
  for (const [method, path] of [["GET", ""], ["DELETE", ""], ["POST", "/rotate-secret"], ["GET", "/deliveries"]]) {
    const res = await app.request(
      `/api/v1/webhooks/${created.id}${path}`,
      jsonRequest(method, undefined, otherHeaders),
    );
    assert.equal(res.status, 404, `${method} ${path}`);
  }
  const listed = await (await app.request("/api/v1/webhooks", { headers: otherHeaders })).json();
  assert.deepEqual(listed.data, []);
  const publishable = await app.request("/api/v1/webhooks", { headers: { "X-API-Key": keys.publishable } });
  assert.equal(publishable.status, 403);
  assert.equal((await app.request("/api/v1/webhooks")).status, 401);
});

dbTest("GET /webhooks/{id}/deliveries pages attempts newest first", async () => {
  const { deps, call, team } = await setup();
  const created = await (await call("POST", "", { url: "http://127.0.0.1:9/in" })).json();
  const rows = [1, 2, 3].map((n) => ({
    id: `01J00000000000000000000${n}`.slice(0, 26),
    endpoint_id: created.id,
    team_id: team.id,
    event_id: `evt_${n}`,
    event_type: "message.sent",
    attempt: n,
    status: n === 3 ? "succeeded" : "failed",
    response_status: n === 3 ? 200 : 500,
    error: n === 3 ? null : "HTTP 500",
    latency_ms: 10 * n,
  }));
  await deps.sql`insert into webhook_attempts ${deps.sql(rows)}`;
  const first = await (await call("GET", `/${created.id}/deliveries?limit=2`)).json();
  assert.deepEqual(first.data.map((a: { attempt: number }) => a.attempt), [3, 2]);
  assert.equal(first.has_more, true);
  assert.equal(first.data[0].status, "succeeded");
  assert.equal(first.data[1].error, "HTTP 500");
  const second = await (await call("GET", `/${created.id}/deliveries?limit=2&starting_after=${first.next_cursor}`))
    .json();
  assert.deepEqual(second.data.map((a: { attempt: number }) => a.attempt), [1]);
  assert.equal(second.has_more, false);
  assert.equal(second.next_cursor, null);
});

dbTest("PATCH /webhooks/{id} changes the url and events, and checks the new url", async () => {
  const { call } = await setup(false);
  // Registered while private targets were refused: a public literal address passes without DNS.
  const created = await (await call("POST", "", { url: "https://93.184.216.34/in" })).json();
  assert.equal(created.is_active, true);
  const patched = await call("PATCH", `/${created.id}`, { events: ["otp.verified"], url: "https://93.184.216.35/x" });
  assert.equal(patched.status, 200);
  const body = await patched.json();
  assert.deepEqual(body.events, ["otp.verified"]);
  assert.equal(body.url, "https://93.184.216.35/x");
  const refused = await call("PATCH", `/${created.id}`, { url: "http://127.0.0.1/x" });
  assert.equal(refused.status, 400);
  const reset = await (await call("PATCH", `/${created.id}`, { events: null })).json();
  assert.deepEqual(reset.events, [...EVENT_TYPES]);
});

dbTest("a webhook id or deliveries cursor over 255 characters is 400; up to 255 the id is 404", async () => {
  const { call } = await setup();
  const created = await (await call("POST", "", { url: "http://127.0.0.1:9/in" })).json();
  for (const [method, path] of [["GET", ""], ["PATCH", ""], ["DELETE", ""], ["POST", "/rotate-secret"]]) {
    const body = method === "PATCH" ? { is_active: true } : undefined;
    const over = await call(method, `/${"h".repeat(MAX_ID_LENGTH + 1)}${path}`, body);
    assert.equal(over.status, 400, `${method} ${path}`);
    assert.deepEqual((await over.json()).message, [`id must be at most ${MAX_ID_LENGTH} characters`]);
    assert.equal((await call(method, `/${"h".repeat(MAX_ID_LENGTH)}${path}`, body)).status, 404, `${method} ${path}`);
  }
  const cursor = await call("GET", `/${created.id}/deliveries?starting_after=${"c".repeat(MAX_ID_LENGTH + 1)}`);
  assert.equal(cursor.status, 400);
  assert.deepEqual((await cursor.json()).message, [`starting_after must be at most ${MAX_ID_LENGTH} characters`]);
});
