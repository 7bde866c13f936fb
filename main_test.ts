import assert from "node:assert/strict";
import { createService, ROOT_LINKS } from "./main.ts";
import { dbTest, randomEmail, testDeps, testTeam } from "./shared/testing.ts";

dbTest("GET /healthz answers ok when the database and KV answer", async () => {
  const deps = await testDeps();
  const app = createService({ ...deps, config: { ...deps.config, ENGINE: "kv" } });
  const res = await app.request("/healthz");
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { status: "ok", engine: "kv", database: true, kv: true });
  assert.ok(res.headers.get("x-request-id"));
});

dbTest("GET /healthz with ENGINE=postgres asks only the database, and is 503 while it is away", async () => {
  const deps = await testDeps();
  const onPostgres = { ...deps, config: { ...deps.config, ENGINE: "postgres" as const } };
  const up = await createService(onPostgres).request("/healthz");
  assert.equal(up.status, 200);
  assert.deepEqual(await up.json(), { status: "ok", engine: "postgres", database: true });
  // A postgres.js query whose connection is refused: /healthz starts it with execute().
  const refused = () => ({ execute: () => Promise.reject(new Error("connection refused")) });
  const away = { ...onPostgres, sql: refused as never };
  const down = await createService(away).request("/healthz");
  assert.equal(down.status, 503);
  assert.deepEqual(await down.json(), { status: "unavailable", engine: "postgres", database: false });
});

dbTest("an unknown route is 404 'Cannot <METHOD> <path>' in Shape A", async () => {
  const app = createService(await testDeps());
  const { keys } = await testTeam(await testDeps());
  const res = await app.request("/api/v1/nothing", { headers: { "X-API-Key": keys.live } });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), {
    statusCode: 404,
    message: "Cannot GET /api/v1/nothing",
    error: "Not Found",
    code: "route_not_found",
  });
});

dbTest("a known path asked with another method is 405 with Allow; an unknown path stays 404", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live };
  const get = await app.request("/api/v1/sms/send", { headers });
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  assert.deepEqual(await get.json(), {
    statusCode: 405,
    message: "Cannot GET /api/v1/sms/send: this path answers POST",
    error: "Method Not Allowed",
    code: "method_not_allowed",
    allowed_methods: ["POST"],
  });
  // A path with parameters: the methods of every route that matches it.
  const contact = await app.request(`/api/v1/contacts/${crypto.randomUUID()}`, { method: "POST", headers });
  assert.equal(contact.status, 405);
  assert.equal(contact.headers.get("allow"), "GET, HEAD, PUT, PATCH, DELETE");
  // Outside /api/v1, where no key is asked for.
  const health = await app.request("/healthz", { method: "DELETE" });
  assert.equal(health.status, 405);
  assert.equal(health.headers.get("allow"), "GET, HEAD");
  assert.equal((await app.request("/api/v1/nothing/here", { method: "PATCH", headers })).status, 404);
  // A browser's preflight is still answered before any of this.
  const preflight = await app.request("/api/v1/contacts", {
    method: "OPTIONS",
    headers: { Origin: "https://example.com", "Access-Control-Request-Method": "POST" },
  });
  assert.equal(preflight.status, 204);
});

dbTest("GET / points at /docs and the OpenAPI document", async () => {
  const app = createService(await testDeps());
  const res = await app.request("/");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.deepEqual(body, ROOT_LINKS);
  assert.equal((await app.request(body.docs)).status, 200);
  assert.equal((await app.request(body.openapi)).status, 200);
});

dbTest("a missing or unknown API key is 401 in Shape B with the message on top too", async () => {
  const app = createService(await testDeps());
  const missing = await app.request("/api/v1/contacts");
  assert.equal(missing.status, 401);
  assert.deepEqual(await missing.json(), {
    statusCode: 401,
    message: "Missing API key",
    error: {
      type: "authentication_error",
      message: "Missing API key",
      details: "Send the API key in the X-API-Key header",
    },
    hint: "Send the API key in the X-API-Key header",
  });
  const unknown = await app.request("/api/v1/contacts", { headers: { "X-API-Key": "sk_live_nope" } });
  assert.equal((await unknown.json()).error.message, "Invalid API key");
});

dbTest("the OpenAPI document is generated and /docs serves a reference page", async () => {
  const app = createService(await testDeps());
  const doc = await app.request("/api/v1/openapi.json");
  assert.equal(doc.status, 200);
  const body = await doc.json();
  assert.equal(body.openapi, "3.1.0");
  assert.ok(body.paths["/healthz"]);
  const docs = await app.request("/docs");
  assert.equal(docs.status, 200);
  assert.match(await docs.text(), /openapi\.json/);
});

dbTest("a JSON content type with an empty body counts as {}, malformed JSON is 400 'Invalid JSON body'", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const headers = () => ({
    "X-API-Key": keys.live,
    "Content-Type": "application/json",
    "Idempotency-Key": crypto.randomUUID(),
  });
  const empty = await app.request("/api/v1/contacts", { method: "POST", headers: headers(), body: "" });
  assert.equal(empty.status, 400);
  assert.equal((await empty.json()).message, "Missing required field: email");
  const malformed = await app.request("/api/v1/contacts", { method: "POST", headers: headers(), body: "{nope" });
  assert.equal(malformed.status, 400);
  assert.equal((await malformed.json()).message, "Invalid JSON body");
  // A body declared as something else (curl -d sends application/x-www-form-urlencoded).
  const form = await app.request("/api/v1/contacts", {
    method: "POST",
    headers: { ...headers(), "Content-Type": "application/x-www-form-urlencoded" },
    body: JSON.stringify({ email: "form@example.com" }),
  });
  assert.equal(form.status, 415);
  assert.deepEqual(await form.json(), {
    statusCode: 415,
    message: "Content-Type must be application/json",
    error: "Unsupported Media Type",
    code: "unsupported_media_type",
  });
});

dbTest("a body nested deeper than 32 levels is 400 on every route, before it reaches Postgres", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const post = (path: string, body: string) =>
    app.request(path, {
      method: "POST",
      headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
      body,
    });
  const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
  // 10,000 levels in a jsonb column overflowed Postgres's stack (a 500, and a wedged embedded Postgres).
  // The body, custom_fields and 30 arrays: 32 levels.
  const ok = await post("/api/v1/contacts", `{"email":"deep30@example.com","custom_fields":{"a":${nested(30)}}}`);
  assert.equal(ok.status, 201);
  for (const depth of [31, 10_000]) {
    const res = await post(
      "/api/v1/contacts",
      `{"email":"deep${depth}@example.com","custom_fields":{"a":${nested(depth)}}}`,
    );
    assert.equal(res.status, 400);
    assert.deepEqual(await res.json(), {
      statusCode: 400,
      message: "Request body must not be nested more than 32 levels deep",
      error: "Bad Request",
      code: "body_too_deep",
    });
  }
  const send = await post(
    "/api/v1/sms/send",
    `{"template_key":"t","recipient_type":"direct_sms","direct_phone":"+14155550123","variables":{"v":${nested(50)}}}`,
  );
  assert.equal(send.status, 400);
  assert.equal((await send.json()).code, "body_too_deep");
  // The service still answers.
  assert.equal((await post("/api/v1/contacts", `{"email":"after@example.com"}`)).status, 201);
});

dbTest("a chunked body is read no further than 1 MiB, whatever its type and before any key is checked", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  // A 16 MiB upload in 64 KiB chunks, counting what is pulled.
  let pulled = 0;
  const endless = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= 16 * 1024 * 1024) return controller.close();
      pulled += 65_536;
      controller.enqueue(new Uint8Array(65_536).fill(0x61));
    },
  });
  const res = await app.request("/api/v1/inbound/twilio/status", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: endless,
  });
  assert.equal(res.status, 413);
  assert.ok(pulled <= 2 * 1024 * 1024, `read ${pulled} bytes`);
  // A small chunked JSON body still works.
  const small = await app.request("/api/v1/contacts", {
    method: "POST",
    headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
    body: ReadableStream.from([new TextEncoder().encode(JSON.stringify({ email: randomEmail() }))]),
  });
  assert.equal(small.status, 201);
});

dbTest("a body over 1 MiB is 413", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const body = JSON.stringify({ email: "a@example.com", custom_fields: { blob: "x".repeat(1024 * 1024) } });
  const res = await app.request("/api/v1/contacts", {
    method: "POST",
    headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
    body,
  });
  assert.equal(res.status, 413);
  assert.equal((await res.json()).statusCode, 413);
});

dbTest("a declared Content-Length decides: 0 with a JSON type counts as {}, over 1 MiB is 413", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live, "Content-Type": "application/json" };
  const empty = await app.request("/api/v1/contacts", {
    method: "POST",
    headers: { ...headers, "Content-Length": "0" },
  });
  assert.equal(empty.status, 400);
  assert.equal((await empty.json()).message, "Missing required field: email");
  const big = await app.request("/api/v1/contacts", {
    method: "POST",
    headers: { ...headers, "Content-Length": String(2 * 1024 * 1024) },
    body: "{}",
  });
  assert.equal(big.status, 413);
});

dbTest("createService() mounts the roles asked for, each with health, metrics and the key check", async () => {
  const deps = await testDeps();
  const { keys } = await testTeam(deps);
  const json = { "X-API-Key": keys.live, "content-type": "application/json" };
  const api = createService(deps, { api: true, otp: false, worker: false });
  const otp = createService(deps, { api: false, otp: true, worker: false });
  for (const app of [api, otp]) {
    assert.equal((await app.request("/healthz")).status, 200);
    assert.equal((await app.request("/metrics")).status, 200);
    assert.equal((await app.request("/api/v1/otp/send", { method: "POST", body: "{}" })).status, 401);
  }
  const otpSend = { method: "POST", headers: json, body: "{}" };
  assert.equal((await api.request("/api/v1/otp/send", otpSend)).status, 404);
  assert.equal((await otp.request("/api/v1/otp/send", otpSend)).status, 400);
  assert.equal((await api.request("/api/v1/contacts", { headers: json })).status, 200);
  assert.equal((await otp.request("/api/v1/contacts", { headers: json })).status, 404);
  assert.equal((await otp.request("/admin/v1/teams", { method: "POST", headers: json, body: "{}" })).status, 404);
});
