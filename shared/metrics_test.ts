import assert from "node:assert/strict";
import { setLogLevel } from "./log.ts";
import { jobsInFlight, metrics, recordRequest, Registry, trackJob, waitForJobs } from "./metrics.ts";

setLogLevel("silent");

Deno.test("Registry.render() writes counters in the Prometheus text format with escaped labels", () => {
  const registry = new Registry();
  const counter = registry.counter("things_total", "Things counted.", ["kind"]);
  counter.inc({ kind: "a" });
  counter.inc({ kind: "a" }, 2);
  counter.inc({ kind: 'say "hi"\\\n' });
  assert.equal(
    registry.render(),
    [
      "# HELP things_total Things counted.",
      "# TYPE things_total counter",
      'things_total{kind="a"} 3',
      'things_total{kind="say \\"hi\\"\\\\\\n"} 1',
      "",
    ].join("\n"),
  );
});

Deno.test("Histogram.render() writes cumulative buckets, +Inf, sum and count", () => {
  const registry = new Registry();
  const histogram = registry.histogram("wait_seconds", "Waits.", ["queue"], [0.1, 1]);
  histogram.observe({ queue: "q" }, 0.05);
  histogram.observe({ queue: "q" }, 0.5);
  histogram.observe({ queue: "q" }, 3);
  assert.equal(
    registry.render(),
    [
      "# HELP wait_seconds Waits.",
      "# TYPE wait_seconds histogram",
      'wait_seconds_bucket{queue="q",le="0.1"} 1',
      'wait_seconds_bucket{queue="q",le="1"} 2',
      'wait_seconds_bucket{queue="q",le="+Inf"} 3',
      'wait_seconds_sum{queue="q"} 3.55',
      'wait_seconds_count{queue="q"} 3',
      "",
    ].join("\n"),
  );
});

Deno.test("Registry refuses a second metric with the same name", () => {
  const registry = new Registry();
  registry.counter("dup_total", "x");
  assert.throws(() => registry.histogram("dup_total", "y"), /name taken/);
});

Deno.test("trackJob() counts a job by outcome, observes queue lag, and rethrows a failure", async () => {
  const type = `test-job-${crypto.randomUUID().slice(0, 8)}`;
  assert.equal(await trackJob({ type, due_at: 1_000 }, () => Promise.resolve(42), () => 3_000), 42);
  await assert.rejects(trackJob({ type }, () => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(metrics.jobs.get({ type, outcome: "ok" }), 1);
  assert.equal(metrics.jobs.get({ type, outcome: "error" }), 1);
  assert.equal(metrics.queueLag.count({ type }), 1);
  assert.equal(metrics.jobDuration.count({ type }), 2);
});

Deno.test("waitForJobs() resolves true when running jobs finish, false at its timeout", async () => {
  assert.equal(await waitForJobs(10), true);
  let release = () => {};
  const job = trackJob({ type: "slow-test-job" }, () => new Promise<void>((r) => release = r));
  assert.equal(jobsInFlight(), 1);
  assert.equal(await waitForJobs(20), false);
  const waiting = waitForJobs(5_000);
  release();
  await job;
  assert.equal(await waiting, true);
  assert.equal(jobsInFlight(), 0);
});

Deno.test("recordRequest() counts a made-up method as OTHER: 1,000 of them add one series, not 1,000", () => {
  const before = metrics.httpRequests.get({ method: "OTHER", route: "/x", status: 404 });
  for (let i = 0; i < 1_000; i++) recordRequest(`M${i}XYZ`, "/x", 404, 1);
  assert.equal(metrics.httpRequests.get({ method: "OTHER", route: "/x", status: 404 }), before + 1_000);
  assert.equal(metrics.httpRequests.get({ method: "M1XYZ", route: "/x", status: 404 }), 0);
});
