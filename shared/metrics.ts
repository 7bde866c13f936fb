/**
 * A tiny in-process metrics registry (counters, gauges and histograms) rendered in the Prometheus text
 * exposition format (version 0.0.4) for `GET /metrics`. One registry per process.
 */
import { log } from "./log.ts";

/** Label values of one series. */
export type Labels = Record<string, string | number>;

/** Default histogram buckets, in seconds (5 ms … 30 s). */
export const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

function escapeLabel(value: string): string {
  return value.replaceAll("\\", "\\\\").replaceAll('"', '\\"').replaceAll("\n", "\\n");
}

function labelText(names: readonly string[], labels: Labels, extra = ""): string {
  const parts = names.map((n) => `${n}="${escapeLabel(String(labels[n] ?? ""))}"`);
  if (extra) parts.push(extra);
  return parts.length === 0 ? "" : `{${parts.join(",")}}`;
}

function seriesKey(names: readonly string[], labels: Labels): string {
  // A loop, not map and join: two of these run on every request.
  let key = "";
  for (let i = 0; i < names.length; i++) key += (i === 0 ? "" : "\u0000") + String(labels[names[i]] ?? "");
  return key;
}

function formatNumber(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

/** A monotonically increasing count per label set. */
export class Counter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(readonly name: string, readonly help: string, readonly labelNames: readonly string[] = []) {}

  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels: Labels = {}, by = 1): void {
    const key = seriesKey(this.labelNames, labels);
    const series = this.#series.get(key);
    if (series) series.value += by;
    else this.#series.set(key, { labels, value: by });
  }

  /** The current value of one series (0 when never counted). */
  get(labels: Labels = {}): number {
    return this.#series.get(seriesKey(this.labelNames, labels))?.value ?? 0;
  }

  /** The exposition text of this counter. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`];
    for (const { labels, value } of this.#series.values()) {
      lines.push(`${this.name}${labelText(this.labelNames, labels)} ${formatNumber(value)}`);
    }
    return lines.join("\n");
  }
}

/** A value read when the metrics are rendered (no labels). */
export class Gauge {
  constructor(readonly name: string, readonly help: string, readonly read: () => number) {}

  /** The exposition text of this gauge. */
  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} gauge`,
      `${this.name} ${formatNumber(this.read())}`,
    ]
      .join("\n");
  }
}

interface HistogramSeries {
  labels: Labels;
  /** Observations per bucket (not cumulative). */
  buckets: number[];
  sum: number;
  count: number;
}

/** Observations counted in cumulative buckets per label set, with their sum and count. */
export class Histogram {
  readonly #series = new Map<string, HistogramSeries>();
  readonly buckets: readonly number[];

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[] = [],
    buckets: readonly number[] = DEFAULT_BUCKETS,
  ) {
    this.buckets = [...buckets].sort((a, b) => a - b);
  }

  /** Records one observation (seconds, for the durations of this service). */
  observe(labels: Labels, value: number): void {
    const key = seriesKey(this.labelNames, labels);
    let series = this.#series.get(key);
    if (!series) {
      series = { labels, buckets: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.#series.set(key, series);
    }
    const index = this.buckets.findIndex((le) => value <= le);
    if (index >= 0) series.buckets[index]++;
    series.sum += value;
    series.count++;
  }

  /** How many observations a series holds (0 when none). */
  count(labels: Labels = {}): number {
    return this.#series.get(seriesKey(this.labelNames, labels))?.count ?? 0;
  }

  /** The exposition text of this histogram. */
  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const series of this.#series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += series.buckets[i];
        const label = labelText(this.labelNames, series.labels, `le="${formatNumber(le)}"`);
        lines.push(`${this.name}_bucket${label} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText(this.labelNames, series.labels, 'le="+Inf"')} ${series.count}`);
      lines.push(`${this.name}_sum${labelText(this.labelNames, series.labels)} ${formatNumber(series.sum)}`);
      lines.push(`${this.name}_count${labelText(this.labelNames, series.labels)} ${series.count}`);
    }
    return lines.join("\n");
  }
}

/** A set of metrics rendered together. */
export class Registry {
  readonly #metrics = new Map<string, Counter | Gauge | Histogram>();

  /** Registers a counter (names are unique in a registry). */
  counter(name: string, help: string, labelNames: readonly string[] = []): Counter {
    return this.#add(new Counter(name, help, labelNames));
  }

  /** Registers a gauge, read by `read` at each rendering. */
  gauge(name: string, help: string, read: () => number): Gauge {
    return this.#add(new Gauge(name, help, read));
  }

  /** Registers a histogram. */
  histogram(name: string, help: string, labelNames: readonly string[] = [], buckets?: readonly number[]): Histogram {
    return this.#add(new Histogram(name, help, labelNames, buckets));
  }

  #add<T extends Counter | Gauge | Histogram>(metric: T): T {
    if (this.#metrics.has(metric.name)) throw new Error(`Cannot register metric ${metric.name}: name taken`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /** Every metric in the Prometheus text format (ends with a newline). */
  render(): string {
    return [...this.#metrics.values()].map((m) => m.render()).join("\n") + "\n";
  }
}

/** The registry of this process, served by `GET /metrics`. */
export const registry = new Registry();

/** The metrics the service keeps; every role adds to these. */
export const metrics = {
  httpRequests: registry.counter("http_requests_total", "HTTP requests answered, by method, route and status.", [
    "method",
    "route",
    "status",
  ]),
  httpDuration: registry.histogram("http_request_duration_seconds", "Time to answer an HTTP request.", [
    "method",
    "route",
  ]),
  jobs: registry.counter("queue_jobs_total", "Queue jobs handled, by job type and outcome (ok, error).", [
    "type",
    "outcome",
  ]),
  jobDuration: registry.histogram("queue_job_duration_seconds", "Time to handle a queue job, by job type.", ["type"]),
  queueLag: registry.histogram(
    "queue_lag_seconds",
    "Time from when a queue job was due to when its handling started, by job type.",
    ["type"],
    [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900],
  ),
  deliveries: registry.counter(
    "message_deliveries_total",
    "Messages handed to a provider or dropped, by channel and outcome (sent, failed, filtered).",
    ["channel", "outcome"],
  ),
  providerLatency: registry.histogram(
    "provider_request_duration_seconds",
    "Time a provider took to answer one send, by provider and channel.",
    ["provider", "channel"],
  ),
  providerAttempts: registry.counter(
    "provider_attempts_total",
    "Hand-overs of a message to a channel account, by provider and outcome (sent, refused, temporary, unknown, skipped: circuit open).",
    ["provider", "outcome"],
  ),
  webhookDeliveries: registry.counter(
    "webhook_deliveries_total",
    "Outbound webhook attempts, by outcome (succeeded, failed, gone, refused, skipped, deferred).",
    ["outcome"],
  ),
  webhookLatency: registry.histogram("webhook_delivery_duration_seconds", "Time a webhook endpoint took to answer."),
  webhookEvents: registry.counter("webhook_events_total", "Events emitted to at least one endpoint, by type.", [
    "type",
  ]),
  otpFraudBlocks: registry.counter(
    "otp_fraud_blocks_total",
    "OTP sends refused by the fraud guard, by reason (country: outside the team's allowed countries; pumping: a blocked number prefix).",
    ["reason"],
  ),
  otpPrefixesBlocked: registry.counter(
    "otp_fraud_prefixes_blocked_total",
    "Number prefixes newly blocked for suspected SMS pumping (each emits otp.fraud_blocked).",
  ),
  otpFraudCounted: registry.counter(
    "otp_fraud_guard_counted_total",
    "What the fraud guard counted per number prefix, by kind (send, verification).",
    ["kind"],
  ),
  inbound: registry.counter(
    "inbound_callbacks_total",
    "Provider callbacks received, by provider, kind and outcome (ok, forbidden).",
    ["provider", "kind", "outcome"],
  ),
};

/** Counts one answered HTTP request (called once per request by the request-context middleware). */
export function recordRequest(method: string, route: string, status: number, durationMs: number): void {
  // Any other method name a client makes up counts as OTHER: one label each would grow without end.
  const label = HTTP_METHODS.has(method) ? method : "OTHER";
  metrics.httpRequests.inc({ method: label, route, status });
  metrics.httpDuration.observe({ method: label, route }, durationMs / 1000);
}

const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** What {@linkcode trackJob} needs to know of a job. */
export interface JobInfo {
  type: string;
  /** Milliseconds since the epoch when the job was due (enqueue time plus delay), for queue lag. */
  due_at?: number;
  team_id?: string;
  job_id?: string;
}

/**
 * Runs a queue job's handler with one JSON log line, counts it by type and outcome, and observes its
 * duration and the queue lag. Errors are rethrown (the queue redelivers the job).
 */
export async function trackJob<T>(job: JobInfo, handler: () => Promise<T>, now: () => number = Date.now): Promise<T> {
  const started = performance.now();
  if (job.due_at !== undefined) metrics.queueLag.observe({ type: job.type }, Math.max(0, now() - job.due_at) / 1000);
  const finish = (outcome: "ok" | "error", error?: unknown) => {
    const ms = performance.now() - started;
    metrics.jobs.inc({ type: job.type, outcome });
    metrics.jobDuration.observe({ type: job.type }, ms / 1000);
    log(outcome === "ok" ? "info" : "error", "job", {
      job_type: job.type,
      job_id: job.job_id,
      team_id: job.team_id,
      outcome,
      duration_ms: Math.round(ms * 100) / 100,
      ...(error === undefined ? {} : { error: String(error) }),
    });
  };
  jobStarted();
  try {
    const result = await handler();
    finish("ok");
    return result;
  } catch (error) {
    finish("error", error);
    throw error;
  } finally {
    jobEnded();
  }
}

let inFlight = 0;
const idleWaiters = new Set<() => void>();

/** Queue jobs running now (inside {@linkcode trackJob}). */
export function jobsInFlight(): number {
  return inFlight;
}

/**
 * Resolves true once no job is running, or false after `timeoutMs` (graceful shutdown waits for
 * this before closing KV; a job cut off then is redelivered by the queue after a restart).
 */
export function waitForJobs(timeoutMs: number): Promise<boolean> {
  if (inFlight === 0) return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      idleWaiters.delete(done);
      resolve(true);
    };
    const timer = setTimeout(() => {
      idleWaiters.delete(done);
      resolve(false);
    }, timeoutMs);
    idleWaiters.add(done);
  });
}

function jobStarted(): void {
  inFlight++;
}

function jobEnded(): void {
  inFlight--;
  if (inFlight === 0) { for (const wake of [...idleWaiters]) wake(); }
}
