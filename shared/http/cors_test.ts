import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, jsonRequest, randomEmail, testDeps, testTeam } from "../testing.ts";

const ORIGIN = { Origin: "https://prefs.example.com" };

async function setup() {
  const deps = await testDeps();
  const { keys } = await testTeam(deps);
  return { app: createService(deps), keys };
}

dbTest("a browser's preflight is answered 204 before the key check, allowing what it asks", async () => {
  const { app } = await setup();
  const res = await app.request("/api/v1/contacts", {
    method: "OPTIONS",
    headers: {
      ...ORIGIN,
      "Access-Control-Request-Method": "POST",
      "Access-Control-Request-Headers": "content-type,x-api-key,x-team-id",
    },
  });
  assert.equal(res.status, 204);
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
  assert.match(res.headers.get("access-control-allow-methods")!, /\bPOST\b/);
  assert.equal(res.headers.get("access-control-allow-headers"), "content-type,x-api-key,x-team-id");
  assert.equal(res.headers.get("access-control-max-age"), "86400");
  assert.equal(await res.text(), "");
});

dbTest("a cross-origin answer, success or error, is readable with its rate-limit and request id headers", async () => {
  const { app, keys } = await setup();
  const created = await app.request(
    "/api/v1/contacts",
    jsonRequest("POST", { email: randomEmail() }, { ...ORIGIN, "X-API-Key": keys.publishable }),
  );
  assert.equal(created.status, 201);
  assert.equal(created.headers.get("access-control-allow-origin"), "*");
  const exposed = created.headers.get("access-control-expose-headers")!.split(/,\s*/);
  for (const name of ["X-Request-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"]) {
    assert.ok(exposed.includes(name), name);
  }
  const refused = await app.request("/api/v1/contacts", { headers: { ...ORIGIN, "X-API-Key": "sk_live_nope" } });
  assert.equal(refused.status, 401);
  assert.equal(refused.headers.get("access-control-allow-origin"), "*");
});

dbTest("a request without an Origin header carries no CORS headers, and OPTIONS alone is no preflight", async () => {
  const { app, keys } = await setup();
  const res = await app.request("/api/v1/contacts", { headers: { "X-API-Key": keys.live } });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  assert.equal(res.headers.get("access-control-expose-headers"), null);
  const options = await app.request("/api/v1/contacts", { method: "OPTIONS", headers: ORIGIN });
  assert.equal(options.status, 401);
});

dbTest("a preflight naming no headers is told X-Contact-Token is allowed (a preference centre sends it)", async () => {
  const { app } = await setup();
  const res = await app.request("/api/v1/contacts/external/user_42/preferences", {
    method: "OPTIONS",
    headers: { ...ORIGIN, "Access-Control-Request-Method": "PATCH" },
  });
  assert.equal(res.status, 204);
  const allowed = res.headers.get("access-control-allow-headers")!.toLowerCase().split(/,\s*/);
  for (const name of ["x-api-key", "x-contact-token", "content-type"]) assert.ok(allowed.includes(name), name);
});
