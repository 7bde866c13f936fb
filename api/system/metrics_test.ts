import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, testDeps, testTeam } from "../../shared/testing.ts";

/** The value of one sample line of an exposition, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

dbTest("GET /metrics counts requests by method, route and status in the Prometheus text format", async () => {
  const app = createService(await testDeps());
  const healthz = 'http_requests_total{method="GET",route="/healthz",status="200"}';
  const first = await app.request("/metrics");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  const before = await first.text();
  assert.match(before, /^# HELP http_requests_total /m);
  assert.match(before, /^# TYPE queue_lag_seconds histogram$/m);
  // Jobs deferred during a burst and not yet due (none here): the bench's drain waits for 0.
  assert.match(before, /^# TYPE queue_jobs_deferred gauge$/m);
  assert.match(before, /^queue_jobs_deferred 0$/m);

  await app.request("/healthz");
  await app.request("/healthz");
  const after = await (await app.request("/metrics")).text();
  assert.equal(sample(after, healthz), sample(before, healthz) + 2);
  assert.ok(sample(after, 'http_request_duration_seconds_count{method="GET",route="/healthz"}') >= 2);
});

dbTest("GET /metrics labels a parameterised route by its pattern, not its path", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { keys } = await testTeam(deps);
  const id = crypto.randomUUID();
  const res = await app.request(`/api/v1/webhooks/${id}`, { headers: { "X-API-Key": keys.live } });
  assert.equal(res.status, 404);
  const text = await (await app.request("/metrics")).text();
  assert.ok(sample(text, 'http_requests_total{method="GET",route="/api/v1/webhooks/:id",status="404"}') >= 1);
  assert.ok(!text.includes(id));
});

dbTest("GET /metrics labels a request a middleware answered (401) with the route it matched", async () => {
  const app = createService(await testDeps());
  const res = await app.request("/api/v1/sms/send", { method: "POST" });
  assert.equal(res.status, 401);
  const text = await (await app.request("/metrics")).text();
  assert.ok(sample(text, 'http_requests_total{method="POST",route="/api/v1/sms/send",status="401"}') >= 1);
});

dbTest("GET /metrics requires the bearer token when METRICS_TOKEN is set", async () => {
  const app = createService(await testDeps({ METRICS_TOKEN: "metrics-secret" }));
  const missing = await app.request("/metrics");
  assert.equal(missing.status, 403);
  assert.equal((await missing.json()).message, "Invalid metrics token");
  const ok = await app.request("/metrics", { headers: { Authorization: "Bearer metrics-secret" } });
  assert.equal(ok.status, 200);
});
