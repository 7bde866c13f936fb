import assert from "node:assert/strict";
import { Resend } from "resend";
import { createService } from "../main.ts";
import type { Deps } from "../shared/deps.ts";
import { metrics } from "../shared/metrics.ts";
import { dbTest, jsonRequest, onKv, testDeps, testTeam } from "../shared/testing.ts";
import { enqueueEvents, type EventType, newEvent } from "../shared/webhook_events.ts";
import { startWorker } from "./queue.ts";
import { WEBHOOK_MAX_ATTEMPTS } from "../shared/backoff.ts";
import { deliverWebhooks, ENDPOINT_CONCURRENCY, WebhookDeliverJob } from "./webhooks.ts";

/** Enqueues one event of a team; the envelope, or undefined when no endpoint wants it. */
async function emitEvent(deps: Deps, teamId: string, type: EventType, data: Record<string, unknown>) {
  const [event] = await enqueueEvents(deps, teamId, [newEvent(type, data, deps.now())]);
  return event;
}

interface Received {
  headers: Headers;
  body: string;
  /** The standardwebhooks library accepted the signature with the endpoint's secret. */
  verified: boolean;
  at: number;
}

/**
 * A webhook receiver on loopback. It answers the statuses of `script` in turn (the last one
 * thereafter) and checks every delivery's signature with the standardwebhooks library.
 */
function startReceiver(script: number[], options: { delayMs?: number } = {}) {
  const received: Received[] = [];
  let secret = "";
  // Requests being answered now, and the most at once.
  const inFlight = { now: 0, most: 0 };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    inFlight.most = Math.max(inFlight.most, ++inFlight.now);
    try {
      return await answer(req);
    } finally {
      inFlight.now--;
    }
  });
  const answer = async (req: Request) => {
    const body = await req.text();
    let verified = false;
    try {
      new Resend("re_test_unused").webhooks.verify({
        payload: body,
        headers: {
          id: req.headers.get("webhook-id") ?? "",
          timestamp: req.headers.get("webhook-timestamp") ?? "",
          signature: req.headers.get("webhook-signature") ?? "",
        },
        webhookSecret: secret,
      });
      verified = true;
    } catch {
      verified = false;
    }
    received.push({ headers: req.headers, body, verified, at: Date.now() });
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const status = script[Math.min(received.length - 1, script.length - 1)];
    return new Response(status === 204 ? null : "ok", { status });
  };
  return {
    url: `http://127.0.0.1:${server.addr.port}/hooks`,
    received,
    inFlight,
    setSecret(value: string) {
      secret = value;
    },
    close: () => server.shutdown(),
  };
}

/** A private in-memory KV whose queue the worker listens to (each test's retries stay its own). */
async function startQueue(deps: Deps): Promise<{ deps: Deps; close: () => void }> {
  const kv = await Deno.openKv(":memory:");
  const queueDeps = onKv(deps, kv);
  startWorker(queueDeps);
  return { deps: queueDeps, close: () => kv.close() };
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error("Timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function setup(overrides: Parameters<typeof testDeps>[0] = {}) {
  const base = await testDeps({ WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_SCALE: 0.002, ...overrides });
  const queue = await startQueue(base);
  const deps = queue.deps;
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const headers = { "X-API-Key": keys.live };
  const register = async (url: string, events?: string[]) => {
    const res = await app.request("/api/v1/webhooks", jsonRequest("POST", { url, events }, headers));
    assert.equal(res.status, 201);
    return await res.json() as { id: string; secret: string };
  };
  const attempts = async (id: string) => {
    const res = await app.request(`/api/v1/webhooks/${id}/deliveries`, { headers });
    assert.equal(res.status, 200);
    return (await res.json()).data as Record<string, unknown>[];
  };
  /** Attempts recorded as succeeded for the endpoint (all of them, unpaged). */
  const succeeded = async (id: string) => {
    const [{ n }] = await deps.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_attempts where endpoint_id = ${id} and status = 'succeeded'`;
    return n;
  };
  return { deps, app, team, headers, register, attempts, succeeded, close: queue.close };
}

dbTest("an enqueued event is delivered as the signed envelope only to endpoints subscribed to its type", async () => {
  const s = await setup();
  const receiver = startReceiver([200]);
  const other = startReceiver([200]);
  try {
    const endpoint = await s.register(receiver.url, ["message.delivered", "message.failed"]);
    receiver.setSecret(endpoint.secret);
    other.setSecret((await s.register(other.url, ["otp.verified"])).secret);
    const jobsBefore = metrics.jobs.get({ type: "webhook-deliver", outcome: "ok" });
    const lagBefore = metrics.queueLag.count({ type: "webhook-deliver" });
    const data = { execution_id: crypto.randomUUID(), message_id: "01JMSG", status: "delivered" };
    const event = await emitEvent(s.deps, s.team.id, "message.delivered", data);
    assert.ok(event);
    await waitFor(() => receiver.received.length === 1);
    const [got] = receiver.received;
    assert.equal(got.verified, true);
    assert.equal(got.headers.get("content-type"), "application/json");
    assert.equal(got.headers.get("webhook-id"), event.id);
    const body = JSON.parse(got.body);
    assert.deepEqual(Object.keys(body).sort(), ["created_at", "data", "id", "type"]);
    assert.equal(body.type, "message.delivered");
    assert.deepEqual(body.data, data);
    assert.match(body.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await waitFor(async () => (await s.attempts(endpoint.id)).length === 1);
    const [attempt] = await s.attempts(endpoint.id);
    assert.equal(attempt.status, "succeeded");
    assert.equal(attempt.response_status, 200);
    assert.equal(attempt.event_id, event.id);
    assert.equal(typeof attempt.latency_ms, "number");
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(other.received.length, 0);
    assert.equal(metrics.jobs.get({ type: "webhook-deliver", outcome: "ok" }), jobsBefore + 1);
    assert.equal(metrics.queueLag.count({ type: "webhook-deliver" }), lagBefore + 1);
  } finally {
    await receiver.close();
    await other.close();
    s.close();
  }
});

dbTest("a failing endpoint is retried with growing waits and the same webhook-id until it answers 2xx", async () => {
  const s = await setup({ WEBHOOK_RETRY_SCALE: 0.002 }); // waits of 60 ms, 120 ms, … (+ up to 25 %)
  const receiver = startReceiver([500, 503, 204]);
  try {
    const endpoint = await s.register(receiver.url);
    receiver.setSecret(endpoint.secret);
    const event = await emitEvent(s.deps, s.team.id, "trigger.completed", { trigger_id: crypto.randomUUID() });
    assert.ok(event);
    await waitFor(async () => (await s.attempts(endpoint.id)).length === 3);
    assert.equal(receiver.received.length, 3);
    assert.ok(receiver.received.every((r) => r.verified && r.headers.get("webhook-id") === event.id));
    const gaps = [1, 2].map((i) => receiver.received[i].at - receiver.received[i - 1].at);
    assert.ok(gaps[0] >= 55, `first wait ${gaps[0]} ms`);
    assert.ok(gaps[1] >= 115, `second wait ${gaps[1]} ms`);
    const attempts = (await s.attempts(endpoint.id)).reverse();
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status, a.response_status]), [
      [1, "failed", 500],
      [2, "failed", 503],
      [3, "succeeded", 204],
    ]);
    assert.equal(attempts[0].error, "HTTP 500");
    assert.ok(attempts[0].next_retry_at);
    assert.equal(attempts[2].next_retry_at, null);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 3);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("an endpoint that always fails gets exactly 13 attempts, the last with no next retry", async () => {
  const s = await setup({ WEBHOOK_RETRY_SCALE: 0.00001 }); // the 24.5-hour schedule in about a second
  const receiver = startReceiver([500]);
  try {
    const endpoint = await s.register(receiver.url);
    receiver.setSecret(endpoint.secret);
    await emitEvent(s.deps, s.team.id, "message.failed", { message_id: "m1" });
    await waitFor(async () => (await s.attempts(endpoint.id)).length === WEBHOOK_MAX_ATTEMPTS, 20_000);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(receiver.received.length, WEBHOOK_MAX_ATTEMPTS);
    const [last] = await s.attempts(endpoint.id);
    assert.equal(last.attempt, WEBHOOK_MAX_ATTEMPTS);
    assert.equal(last.next_retry_at, null);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("a 410 answer disables the endpoint: no retry and no further events", async () => {
  const s = await setup();
  const receiver = startReceiver([410]);
  try {
    const endpoint = await s.register(receiver.url);
    receiver.setSecret(endpoint.secret);
    await emitEvent(s.deps, s.team.id, "otp.verified", { session_id: "s1" });
    await waitFor(async () => (await s.attempts(endpoint.id)).length === 1);
    const listed = await (await s.app.request("/api/v1/webhooks", { headers: s.headers })).json();
    assert.equal(listed.data[0].is_active, false);
    assert.equal(listed.data[0].disabled_reason, "gone");
    const [attempt] = await s.attempts(endpoint.id);
    assert.equal(attempt.response_status, 410);
    assert.equal(attempt.next_retry_at, null);
    assert.equal(await emitEvent(s.deps, s.team.id, "otp.verified", { session_id: "s2" }), undefined);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(receiver.received.length, 1);
    // Re-enabling it makes it receive again.
    const patched = await s.app.request(
      `/api/v1/webhooks/${endpoint.id}`,
      jsonRequest("PATCH", { is_active: true }, s.headers),
    );
    assert.equal((await patched.json()).disabled_reason, null);
    assert.ok(await emitEvent(s.deps, s.team.id, "otp.verified", { session_id: "s3" }));
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("delivery refuses a loopback target when private targets are not allowed, and retries later", async () => {
  const s = await setup();
  const receiver = startReceiver([200]);
  try {
    const endpoint = await s.register(receiver.url);
    const strict: Deps = { ...s.deps, config: { ...s.deps.config, WEBHOOK_ALLOW_PRIVATE: false } };
    const job = WebhookDeliverJob.parse({
      type: "webhook-deliver",
      team_id: s.team.id,
      attempt: 1,
      deliveries: [{ endpoint_id: endpoint.id, event: newEvent("message.sent", { message_id: "m" }, Date.now()) }],
    });
    const refusedBefore = metrics.webhookDeliveries.get({ outcome: "refused" });
    await deliverWebhooks(strict, job);
    const [attempt] = await s.attempts(endpoint.id);
    assert.equal(attempt.status, "failed");
    assert.equal(attempt.error, "Refused: url must not point to a loopback address");
    assert.ok(attempt.next_retry_at);
    assert.equal(metrics.webhookDeliveries.get({ outcome: "refused" }), refusedBefore + 1);
    assert.equal(receiver.received.length, 0);
  } finally {
    await receiver.close();
    s.close();
  }
});

/** The first-attempt job of `count` new `message.sent` events to each of the endpoints. */
function firstAttempt(teamId: string, endpointIds: string | string[], count = 1): WebhookDeliverJob {
  const events = Array.from({ length: count }, (_, i) => newEvent("message.sent", { message_id: `m${i}` }, Date.now()));
  return WebhookDeliverJob.parse({
    type: "webhook-deliver",
    team_id: teamId,
    attempt: 1,
    deliveries: [endpointIds].flat().flatMap((endpoint_id) => events.map((event) => ({ endpoint_id, event }))),
  });
}

dbTest("jobs running at once keep to ENDPOINT_CONCURRENCY requests in flight to one endpoint", async () => {
  const s = await setup();
  const receiver = startReceiver([204], { delayMs: 50 });
  try {
    const endpoint = await s.register(receiver.url);
    // Three jobs of 20 events each, as the queue hands over a fan-out's jobs together.
    const jobs = Array.from({ length: 3 }, () => firstAttempt(s.team.id, endpoint.id, 20));
    await Promise.all(jobs.map((job) => deliverWebhooks(s.deps, job)));
    assert.equal(receiver.received.length, 60);
    assert.equal(receiver.inFlight.most, ENDPOINT_CONCURRENCY);
    assert.equal(await s.succeeded(endpoint.id), 60);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("a slow endpoint's backlog does not hold back another endpoint's deliveries", async () => {
  const s = await setup();
  const slow = startReceiver([204], { delayMs: 200 });
  const fast = startReceiver([204]);
  try {
    const [slowEndpoint, fastEndpoint] = [await s.register(slow.url), await s.register(fast.url)];
    // Forty events to the slow endpoint take about three rounds of ENDPOINT_CONCURRENCY there.
    const job = firstAttempt(s.team.id, [slowEndpoint.id, fastEndpoint.id], 40);
    await deliverWebhooks(s.deps, job);
    assert.equal(fast.received.length, 40);
    assert.equal(slow.received.length, 40);
    // Every delivery to the fast endpoint was in before the slow endpoint's last round began.
    const lastFast = Math.max(...fast.received.map((r) => r.at));
    const slowRounds = slow.received.map((r) => r.at).sort((a, b) => a - b);
    assert.ok(lastFast < slowRounds[2 * ENDPOINT_CONCURRENCY]);
  } finally {
    await slow.close();
    await fast.close();
    s.close();
  }
});

/** How many times each event id reached the receiver. */
function arrivals(receiver: { received: Received[] }): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of receiver.received) {
    const id = r.headers.get("webhook-id")!;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

dbTest(
  "jobs behind a busy endpoint put their deliveries off instead of waiting, and each event arrives once",
  async () => {
    const s = await setup({ WEBHOOK_SLOT_WAIT_MS: 50 });
    const receiver = startReceiver([204], { delayMs: 100 });
    try {
      const endpoint = await s.register(receiver.url);
      const deferredBefore = metrics.webhookDeliveries.get({ outcome: "deferred" });
      const jobs = Array.from({ length: 3 }, () => firstAttempt(s.team.id, endpoint.id, 20));
      // Each job ends once its own deliveries are made or put off; the queue runs what was put off.
      await Promise.all(jobs.map((job) => deliverWebhooks(s.deps, job)));
      assert.ok(metrics.webhookDeliveries.get({ outcome: "deferred" }) > deferredBefore);
      await waitFor(() => arrivals(receiver).size === 60, 20_000);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual([...new Set(arrivals(receiver).values())], [1]);
      assert.ok(receiver.inFlight.most <= ENDPOINT_CONCURRENCY);
      assert.equal(await s.succeeded(endpoint.id), 60);
    } finally {
      await receiver.close();
      s.close();
    }
  },
);

dbTest("a job the queue runs twice puts its deliveries off once: each event still arrives once", async () => {
  const s = await setup({ WEBHOOK_SLOT_WAIT_MS: 50 });
  const receiver = startReceiver([204], { delayMs: 400 });
  try {
    const endpoint = await s.register(receiver.url);
    // A job that takes every place at the endpoint for 400 ms.
    const blocker = deliverWebhooks(s.deps, firstAttempt(s.team.id, endpoint.id, ENDPOINT_CONCURRENCY));
    await waitFor(() => receiver.inFlight.now === ENDPOINT_CONCURRENCY);
    const job = firstAttempt(s.team.id, endpoint.id, 5);
    await Promise.all([deliverWebhooks(s.deps, job), deliverWebhooks(s.deps, job)]);
    await blocker;
    const ids = job.deliveries.map((d) => d.event.id);
    await waitFor(() => ids.every((id) => arrivals(receiver).has(id)), 20_000);
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(ids.map((id) => arrivals(receiver).get(id)), [1, 1, 1, 1, 1]);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("a job whose attempts cannot be recorded fails (the queue runs it again) after its requests", async () => {
  const s = await setup();
  const receiver = startReceiver([204]);
  try {
    const endpoint = await s.register(receiver.url);
    // The attempts' transaction fails; the job's reads still work.
    const sql = new Proxy(s.deps.sql, {
      get: (target, key) =>
        key === "begin" ? () => Promise.reject(new Error("database gone")) : Reflect.get(target, key),
    });
    await assert.rejects(deliverWebhooks({ ...s.deps, sql }, firstAttempt(s.team.id, endpoint.id, 3)), /database gone/);
    assert.equal(receiver.received.length, 3);
    assert.deepEqual(await s.attempts(endpoint.id), []);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest("a redelivered job does not POST again to an endpoint that already succeeded", async () => {
  const s = await setup();
  const receiver = startReceiver([200]);
  try {
    const endpoint = await s.register(receiver.url);
    const job = firstAttempt(s.team.id, endpoint.id);
    await deliverWebhooks(s.deps, job);
    await deliverWebhooks(s.deps, job);
    assert.equal(receiver.received.length, 1);
    assert.equal((await s.attempts(endpoint.id)).length, 1);
  } finally {
    await receiver.close();
    s.close();
  }
});

dbTest(
  "a failing job the queue runs twice enqueues its retry once: the attempts after it are not doubled",
  async () => {
    const s = await setup({ WEBHOOK_RETRY_SCALE: 0.00001 }); // the whole schedule in about a second
    const receiver = startReceiver([500]);
    try {
      const endpoint = await s.register(receiver.url);
      const job = firstAttempt(s.team.id, endpoint.id);
      // Two runs of the first attempt at once (the queue delivers at least once).
      await Promise.all([deliverWebhooks(s.deps, job), deliverWebhooks(s.deps, job)]);
      await waitFor(async () => (await s.attempts(endpoint.id)).length >= WEBHOOK_MAX_ATTEMPTS + 1, 20_000);
      await new Promise((r) => setTimeout(r, 500));
      // The doubled first attempt, then attempts 2 to 13 once each.
      const attempts = (await s.attempts(endpoint.id)).map((a) => a.attempt as number).sort((a, b) => a - b);
      assert.deepEqual(attempts, [1, 1, ...Array.from({ length: WEBHOOK_MAX_ATTEMPTS - 1 }, (_, i) => i + 2)]);
      assert.equal(receiver.received.length, WEBHOOK_MAX_ATTEMPTS + 1);
    } finally {
      await receiver.close();
      s.close();
    }
  },
);

dbTest("a slow endpoint does not hold back the retry of a fast failure in the same job", async () => {
  const s = await setup({ WEBHOOK_TIMEOUT_MS: 1_500, WEBHOOK_RETRY_SCALE: 0.01 }); // first wait 300–375 ms
  const fast = startReceiver([500, 204]);
  const slow = startReceiver([200], { delayMs: 3_000 });
  try {
    const quick = await s.register(fast.url);
    await s.register(slow.url);
    await emitEvent(s.deps, s.team.id, "message.sent", { message_id: "m" });
    await waitFor(() => fast.received.length === 2, 10_000);
    const wait = fast.received[1].at - fast.received[0].at;
    // Counted from the fast failure, not from the slow endpoint's timeout 1.5 s later.
    assert.ok(wait < 1_400, `second attempt ${wait} ms after the first`);
    // The second attempt is recorded once its answer is in: wait for its row.
    await waitFor(async () => (await s.attempts(quick.id)).length === 2);
    const [second, first] = await s.attempts(quick.id);
    assert.ok(Date.parse(first.created_at as string) <= fast.received[0].at, "the attempt's own time");
    assert.equal(second.status, "succeeded");
  } finally {
    await fast.close();
    await slow.close();
    s.close();
  }
});

dbTest("an endpoint slower than WEBHOOK_TIMEOUT_MS counts as a failed attempt", async () => {
  const s = await setup({ WEBHOOK_TIMEOUT_MS: 100, WEBHOOK_RETRY_SCALE: 100 });
  const receiver = startReceiver([200], { delayMs: 400 });
  try {
    const endpoint = await s.register(receiver.url);
    await emitEvent(s.deps, s.team.id, "message.sent", { message_id: "m" });
    await waitFor(async () => (await s.attempts(endpoint.id)).length === 1);
    const [attempt] = await s.attempts(endpoint.id);
    assert.equal(attempt.status, "failed");
    assert.equal(attempt.error, "Timed out after 100 ms");
    assert.equal(attempt.response_status, null);
  } finally {
    await receiver.close();
    s.close();
  }
});
