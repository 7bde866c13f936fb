/**
 * The `webhook-deliver` queue job: POSTs each event, signed per Standard Webhooks, to its endpoint,
 * records every attempt, disables an endpoint that answers 410, and re-enqueues the failures with
 * exponential back-off and jitter (13 attempts over more than 24 hours).
 */
import type { Deps } from "../shared/deps.ts";
import { Batcher } from "../shared/batcher.ts";
import { webhookDeferralDelayMs, webhookRetryDelayMs } from "../shared/backoff.ts";
import { asJson } from "../shared/db.ts";
import { KeyedLimiter } from "./limiter.ts";
import { log } from "../shared/log.ts";
import { newUlid } from "../shared/sending/ids.ts";
import { metrics } from "../shared/metrics.ts";
import { urlRefusal } from "../shared/ssrf.ts";
import { type Delivery, invalidateEndpointCache, packJobs, WebhookDeliverJob } from "../shared/webhook_events.ts";
import { webhookHeaders } from "../shared/webhook_signing.ts";

export { WebhookDeliverJob };

/** Attempt ids: ulids that keep increasing within a millisecond, so "newest first" is exact. */
const attemptId = newUlid;

/**
 * Deliveries to one endpoint in flight at once, over every job of this process. A fan-out's events
 * fill hundreds of jobs that the queue hands over together: bounded per job only, a send to 20,000
 * contacts opened about 700 connections to the customer's server at once.
 */
export const ENDPOINT_CONCURRENCY = 16;
const endpointSlots = new KeyedLimiter(ENDPOINT_CONCURRENCY);

interface EndpointRow {
  id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Date | null;
  is_active: boolean;
}

/** What one attempt came to. */
interface Outcome {
  delivery: Delivery;
  /** When the attempt started and ended (ms since the epoch, from deps.now). */
  startedAt: number;
  endedAt: number;
  status: "succeeded" | "failed";
  /** The endpoint answered 410 Gone: disable it, never retry. */
  gone: boolean;
  responseStatus: number | null;
  error: string | null;
  latencyMs: number;
}

async function attempt(
  deps: Deps,
  endpoint: EndpointRow,
  delivery: Delivery,
  refusalOf: (url: string) => Promise<string | undefined>,
): Promise<Outcome> {
  const started = performance.now();
  const startedAt = deps.now();
  const result = (status: Outcome["status"], responseStatus: number | null, error: string | null): Outcome => ({
    delivery,
    startedAt,
    endedAt: deps.now(),
    status,
    gone: responseStatus === 410,
    responseStatus,
    error,
    latencyMs: Math.round(performance.now() - started),
  });
  const refusal = await refusalOf(endpoint.url);
  if (refusal) return result("failed", null, `Refused: ${refusal}`);
  const body = JSON.stringify(delivery.event);
  const now = deps.now();
  const secrets = [endpoint.secret];
  if (
    endpoint.previous_secret && endpoint.previous_secret_expires_at &&
    endpoint.previous_secret_expires_at.getTime() > now
  ) {
    secrets.push(endpoint.previous_secret);
  }
  const headers = await webhookHeaders(secrets, delivery.event.id, Math.floor(now / 1000), body);
  try {
    const res = await fetch(endpoint.url, {
      method: "POST",
      headers: { "content-type": "application/json", "user-agent": "messaging-webhooks/1", ...headers },
      body,
      // A redirect could lead anywhere, a private address included: it counts as a failure.
      redirect: "manual",
      signal: AbortSignal.timeout(deps.config.WEBHOOK_TIMEOUT_MS),
    });
    await res.body?.cancel();
    const ok = res.status >= 200 && res.status < 300;
    return result(ok ? "succeeded" : "failed", res.status, ok ? null : `HTTP ${res.status}`);
  } catch (error) {
    const message = error instanceof DOMException && error.name === "TimeoutError"
      ? `Timed out after ${deps.config.WEBHOOK_TIMEOUT_MS} ms`
      : String(error instanceof Error ? error.message : error);
    return result("failed", null, message);
  }
}

/**
 * Handles one `webhook-deliver` job. Deliveries already recorded as succeeded (a redelivered job)
 * and deliveries to deleted or disabled endpoints are skipped.
 */
export async function deliverWebhooks(deps: Deps, job: WebhookDeliverJob): Promise<void> {
  const sql = deps.sql;
  const endpointIds = [...new Set(job.deliveries.map((d) => d.endpoint_id))];
  const eventIds = [...new Set(job.deliveries.map((d) => d.event.id))];
  const [endpoints, done] = await Promise.all([
    sql<EndpointRow[]>`
      select id, url, secret, previous_secret, previous_secret_expires_at, is_active
      from webhook_endpoints where team_id = ${job.team_id} and id = any(${endpointIds}::uuid[])`,
    sql<{ key: string }[]>`
      select event_id || ' ' || endpoint_id as key from webhook_attempts
      where status = 'succeeded' and event_id = any(${eventIds}::text[])`,
  ]);
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const succeeded = new Set(done.map((r) => r.key));
  const due = job.deliveries.filter((d) => {
    const active = byId.get(d.endpoint_id)?.is_active && !succeeded.has(`${d.event.id} ${d.endpoint_id}`);
    if (!active) metrics.webhookDeliveries.inc({ outcome: "skipped" });
    return active;
  });
  if (due.length === 0) return;

  // The wait before this job's retries (jitter drawn once); each failure waits from its own end.
  const delay = webhookRetryDelayMs(job.attempt, deps.config.WEBHOOK_RETRY_SCALE);
  // Attempts are recorded, and their retries enqueued, as they end (those ending meanwhile share the
  // writes): a slow endpoint holds back no other endpoint's retry. A delivery's next attempt does not
  // wait for the last one's record: the records' commits wait their turn behind the database's other
  // work (a fan-out's), and waiting for each would hold the job to a few attempts a commit.
  const recorder = new Batcher<Outcome>((outcomes) => record(deps, job, outcomes, delay), { maxWeight: 500 });
  const records: Promise<void>[] = [];
  let recordFailure: { error: unknown } | undefined;
  // An endpoint's URL is checked (its name resolved) once a job, not once an event.
  const refusals = new Map<string, Promise<string | undefined>>();
  const refusalOf = (url: string) => {
    let refusal = refusals.get(url);
    if (!refusal) {
      refusal = urlRefusal(url, { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE });
      refusals.set(url, refusal);
    }
    return refusal;
  };
  const deferred: Delivery[] = [];
  await Promise.all(due.map(async (d) => {
    const ran = await endpointSlots.tryRun(d.endpoint_id, deps.config.WEBHOOK_SLOT_WAIT_MS, async () => {
      const outcome = await attempt(deps, byId.get(d.endpoint_id)!, d, refusalOf);
      records.push(recorder.add(outcome).catch((error) => void (recordFailure ??= { error })));
    });
    if (!ran) deferred.push(d);
  }));
  await Promise.all(records);
  // The job runs again (the queue redelivers it); what was recorded as succeeded is skipped then.
  if (recordFailure) throw recordFailure.error;
  if (deferred.length > 0) await deferDeliveries(deps, job, deferred);
}

/**
 * Enqueues the deliveries that found no place at their endpoint again, as the same attempt, a little
 * later: once per (event, endpoint, attempt, deferral), as retries are.
 */
async function deferDeliveries(deps: Deps, job: WebhookDeliverJob, deliveries: Delivery[]): Promise<void> {
  const deferrals = (job.deferrals ?? 0) + 1;
  const due = deps.now() + webhookDeferralDelayMs(deferrals);
  metrics.webhookDeliveries.inc({ outcome: "deferred" }, deliveries.length);
  await enqueueOnce(
    deps,
    { team_id: job.team_id, attempt: job.attempt, deferrals },
    deliveries.map((delivery) => ({ delivery, due })),
    (d) => `${d.event.id} ${d.endpoint_id} ${job.attempt} deferral ${deferrals}`,
  );
}

/** Records attempts that ended, disables the endpoints that answered 410, and enqueues the retries. */
async function record(deps: Deps, job: WebhookDeliverJob, outcomes: Outcome[], delay: number | undefined) {
  const retryAt = (o: Outcome) => (delay === undefined || o.status !== "failed" || o.gone ? null : o.endedAt + delay);
  const rows = outcomes.map((o) => {
    const next = retryAt(o);
    return {
      id: attemptId(o.startedAt),
      endpoint_id: o.delivery.endpoint_id,
      team_id: job.team_id,
      event_id: o.delivery.event.id,
      event_type: o.delivery.event.type,
      attempt: job.attempt,
      status: o.status,
      response_status: o.responseStatus,
      error: o.error,
      latency_ms: o.latencyMs,
      next_retry_at: next === null ? null : new Date(next),
      created_at: new Date(o.startedAt),
      // What a manual retry from the dashboard sends again (see 023_dashboard_webhooks_domains.sql).
      event: o.status === "failed" ? asJson(o.delivery.event) : null,
    };
  });
  const gone = [...new Set(outcomes.filter((o) => o.gone).map((o) => o.delivery.endpoint_id))];
  // One transaction: whoever reads an endpoint's 410 attempt also sees the endpoint disabled.
  await deps.sql.begin(async (tx) => {
    await tx`insert into webhook_attempts ${tx(rows)}`;
    if (gone.length > 0) {
      await tx`
        update webhook_endpoints set is_active = false, disabled_reason = 'gone', updated_at = now()
        where id = any(${gone}::uuid[])`;
    }
  });
  if (gone.length > 0) invalidateEndpointCache(job.team_id);

  for (const o of outcomes) {
    const outcome = o.gone ? "gone" : o.error?.startsWith("Refused:") ? "refused" : o.status;
    metrics.webhookDeliveries.inc({ outcome });
    metrics.webhookLatency.observe({}, o.latencyMs / 1000);
    if (o.status === "failed") {
      const next = retryAt(o);
      log("warn", "webhook delivery failed", {
        team_id: job.team_id,
        endpoint_id: o.delivery.endpoint_id,
        event_id: o.delivery.event.id,
        attempt: job.attempt,
        response_status: o.responseStatus,
        error: o.error,
        next_retry_at: next === null ? null : new Date(next),
      });
    }
  }
  const retries = outcomes.flatMap((o) => {
    const due = retryAt(o);
    return due === null ? [] : [{ delivery: o.delivery, due }];
  });
  if (retries.length > 0) {
    await enqueueOnce(
      deps,
      { team_id: job.team_id, attempt: job.attempt + 1 },
      retries,
      (d) => `${d.event.id} ${d.endpoint_id} ${job.attempt + 1}`,
    );
  }
}

/** Deliveries of one retry or deferral job at most: each carries a mark, checked in the job's unit of work. */
const RETRIES_PER_JOB = 50;

/**
 * Enqueues deliveries (a retry's next attempt, or an attempt put off) once per `key`: each enqueue
 * writes the marks of its deliveries (a records kind) in the unit of work of its job, and no later
 * run of the same job gets past them. The queue runs a job at least once, and a job run twice would
 * otherwise double every retry after it.
 */
async function enqueueOnce(
  deps: Deps,
  next: { team_id: string; attempt: number; deferrals?: number },
  items: { delivery: Delivery; due: number }[],
  key: (d: Delivery) => string,
): Promise<void> {
  // Deliveries due within a second of each other share a job, due when the last of them is.
  const groups: { due: number; deliveries: Delivery[] }[] = [];
  for (const r of [...items].sort((a, b) => a.due - b.due)) {
    const last = groups.at(-1);
    if (last && r.due - last.due < 1_000) {
      last.deliveries.push(r.delivery);
      last.due = Math.max(last.due, r.due);
    } else groups.push({ due: r.due, deliveries: [r.delivery] });
  }
  for (const { due, deliveries } of groups) {
    for (let i = 0; i < deliveries.length; i += RETRIES_PER_JOB) {
      const { jobs } = packJobs(next.team_id, deliveries.slice(i, i + RETRIES_PER_JOB), next.attempt, due);
      for (const packed of jobs) {
        const retryJob = next.deferrals ? { ...packed, deferrals: next.deferrals } : packed;
        if (await commitRetry(deps, retryJob, key, due)) continue;
        // Another run of the job enqueued some of them already: the rest one by one.
        for (const d of retryJob.deliveries) await commitRetry(deps, { ...retryJob, deliveries: [d] }, key, due);
      }
    }
  }
}

/** Enqueues `job` with the marks of its deliveries, unless one is already there; answers whether it did. */
async function commitRetry(
  deps: Deps,
  job: WebhookDeliverJob,
  key: (d: Delivery) => string,
  due: number,
): Promise<boolean> {
  const marks = deps.records("webhook_enqueued");
  const mark = { expected: null, ttlMs: RETRY_KEY_TTL_MS, activeUntil: null };
  return await deps.atomically(async (unit) => {
    for (const d of job.deliveries) await marks.put("", key(d), true, mark, unit);
    await deps.queue.enqueue(job, { delayMs: Math.max(0, due - deps.now()) }, unit);
  });
}

/** How long the mark of an enqueued retry is kept: past the last retry of its schedule. */
const RETRY_KEY_TTL_MS = 3 * 86_400_000;
