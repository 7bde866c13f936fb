import assert from "node:assert/strict";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { newWebhookSecret } from "../../shared/webhook_signing.ts";
import { createEndpoint, listEndpoints } from "../webhooks/queries.ts";
import { dashboardFixture } from "./testing.ts";

// Public addresses written out: a host name would be resolved, and the tests run without DNS.
dbTest("an owner adds a webhook endpoint from the dashboard: its secret is shown once, then never", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const list = await v.get("/dashboard/webhooks");
  assert.match(list.html, /Add an endpoint/);
  const created = await v.post("/dashboard/webhooks", {
    url: "https://93.184.216.34/hooksin",
    events: "message.failed",
  });
  assert.equal(created.status, 201, created.html);
  const [endpoint] = await listEndpoints(f.deps.sql, f.team.id);
  assert.equal(endpoint.url, "https://93.184.216.34/hooksin");
  assert.deepEqual(endpoint.events, ["message.failed"]);
  const [secret] = await f.deps.sql<
    { secret: string }[]
  >`select secret from webhook_endpoints where id = ${endpoint.id}`;
  assert.ok(created.html.includes(secret.secret), "shown in the answer");
  assert.match(created.html, /shown only this once/);
  const again = await v.get(`/dashboard/webhooks/${endpoint.id}`);
  assert.equal(again.status, 200);
  assert.ok(!again.html.includes(secret.secret), "not shown again");
});

dbTest("several ticked events are all kept; none ticked is every event", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.owner.email);
  // Two ticked boxes of one name, as a browser posts them (the Visitor posts one value a name).
  const body = new URLSearchParams([
    ["_csrf", v.csrf!],
    ["url", "https://93.184.216.34/ahook"],
    ["events", "message.sent"],
    ["events", "otp.verified"],
  ]);
  const res = await f.app.request("/dashboard/webhooks", {
    method: "POST",
    body,
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Origin: "http://localhost",
      Cookie: v.cookie!,
    },
  });
  assert.equal(res.status, 201);
  assert.equal((await v.post("/dashboard/webhooks", { url: "https://93.184.216.34/bhook" })).status, 201);
  const endpoints = await listEndpoints(f.deps.sql, f.team.id);
  const byUrl = Object.fromEntries(endpoints.map((e) => [e.url, e.events]));
  assert.deepEqual(byUrl["https://93.184.216.34/ahook"], ["message.sent", "otp.verified"]);
  assert.equal(byUrl["https://93.184.216.34/bhook"], null);
});

dbTest(
  "the API's rules hold: a private address, a bad URL and an unknown event are refused with a message",
  async () => {
    const f = await dashboardFixture();
    const v = f.visitor();
    await v.signIn(f.owner.email);
    const local = await v.post("/dashboard/webhooks", { url: "http://127.0.0.1:8080/hook" });
    assert.equal(local.status, 400);
    assert.match(local.html, /Not added: /);
    assert.ok(local.html.includes('value="http://127.0.0.1:8080/hook"'), "the URL stays in the form");
    const unknown = await v.post("/dashboard/webhooks", { url: "https://93.184.216.34/c", events: "message.eaten" });
    assert.equal(unknown.status, 400);
    assert.equal((await v.post("/dashboard/webhooks", { url: "" })).status, 400);
    assert.equal((await listEndpoints(f.deps.sql, f.team.id)).length, 0);
  },
);

dbTest("members cannot add endpoints; a forged form is refused; another team's endpoints stay theirs", async () => {
  const f = await dashboardFixture();
  const other = await testTeam(f.deps);
  await createEndpoint(f.deps.sql, other.team.id, {
    url: "https://theirs.example.com/",
    events: null,
    secret: newWebhookSecret(),
  });
  const member = f.visitor();
  await member.signIn(f.member.email);
  assert.ok(!(await member.get("/dashboard/webhooks")).html.includes("Add an endpoint"));
  assert.equal((await member.post("/dashboard/webhooks", { url: "https://93.184.216.34/m" })).status, 403);
  const owner = f.visitor();
  await owner.signIn(f.owner.email);
  owner.csrf = "not-this-session";
  assert.equal((await owner.post("/dashboard/webhooks", { url: "https://93.184.216.34/o" })).status, 403);
  assert.equal((await listEndpoints(f.deps.sql, f.team.id)).length, 0);
  assert.equal((await listEndpoints(f.deps.sql, other.team.id)).length, 1);
});
