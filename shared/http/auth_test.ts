import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, testDeps, testTeam } from "../testing.ts";

dbTest("apiKeyAuth() answers a Bearer token with a 401 that names X-API-Key", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const res = await app.request("/api/v1/contacts", { headers: { Authorization: `Bearer ${keys.live}` } });
  assert.equal(res.status, 401);
  const body = await res.json();
  assert.equal(body.message, "Missing API key");
  assert.equal(body.error.type, "authentication_error");
  assert.equal(body.hint, "Send the API key in the X-API-Key header: the Authorization header is not read on /api/v1");
  assert.equal(body.error.details, body.hint);
  // The key with its Bearer prefix in the right header.
  const prefixed = await app.request("/api/v1/contacts", { headers: { "X-API-Key": `Bearer ${keys.live}` } });
  assert.equal(prefixed.status, 401);
  assert.equal((await prefixed.json()).hint, "Send the key alone in the X-API-Key header, without 'Bearer '");
  // An unknown key of the right form gets no hint: nothing about it says what is wrong.
  const unknown = await app.request("/api/v1/contacts", { headers: { "X-API-Key": "sk_live_nope" } });
  assert.equal((await unknown.json()).hint, undefined);
});

dbTest("a missing X-Team-ID on the event endpoint is 401 'Invalid team context' naming the header", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const post = (headers: Record<string, string>) =>
    app.request("/api/v1/events/send", {
      method: "POST",
      headers: { "X-API-Key": keys.live, "Content-Type": "application/json", ...headers },
      body: JSON.stringify({ event_name: "signup" }),
    });
  const missing = await post({});
  assert.equal(missing.status, 401);
  assert.deepEqual(await missing.json(), {
    statusCode: 401,
    message: "Invalid team context",
    error: "Unauthorized",
    code: "invalid_team_context",
    details: { field: "X-Team-ID", code: "required" },
    hint: `This endpoint requires the X-Team-ID header: send X-Team-ID: ${team.id} (the team of this API key)`,
  });
  const other = await post({ "X-Team-ID": crypto.randomUUID() });
  assert.equal(other.status, 401);
  const body = await other.json();
  assert.deepEqual(body.details, { field: "X-Team-ID", code: "invalid_value" });
  assert.equal(body.hint, `X-Team-ID must name the team of this API key: X-Team-ID: ${team.id}`);
});
