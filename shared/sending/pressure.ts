import type { Config } from "../config.ts";
import { registry } from "../metrics.ts";

/** Width of one counting bucket (ms) and how many recent buckets make the rate. */
const BUCKET_MS = 100;
const BUCKETS = 3;

/**
 * How many sends this process has been accepting lately. The worker of the same process reads it to
 * leave the CPU to the accept path during a burst (see GroupCoalescer): accepting a send costs
 * a fraction of delivering it, and the queue holds what is accepted.
 */
export class AcceptPressure {
  #buckets = new Map<number, number>();
  #burstSince: number | undefined;

  /** Counts `n` sends accepted now. */
  note(now: number, n = 1): void {
    const bucket = Math.floor(now / BUCKET_MS);
    this.#buckets.set(bucket, (this.#buckets.get(bucket) ?? 0) + n);
    if (this.#buckets.size > BUCKETS * 4) {
      for (const b of this.#buckets.keys()) if (b < bucket - BUCKETS) this.#buckets.delete(b);
    }
  }

  /** Sends per second accepted over the last few hundred milliseconds. */
  rate(now: number): number {
    const bucket = Math.floor(now / BUCKET_MS);
    let sum = 0;
    for (let b = bucket - BUCKETS + 1; b <= bucket; b++) sum += this.#buckets.get(b) ?? 0;
    return (sum * 1000) / (BUCKETS * BUCKET_MS);
  }

  /**
   * How long (ms) the rate has stayed above `busyRate` as seen by the calls to this method, or
   * undefined when it is not above it now (or `busyRate` is 0: never busy).
   */
  burstAge(now: number, busyRate: number): number | undefined {
    if (busyRate <= 0 || this.rate(now) <= busyRate) {
      this.#burstSince = undefined;
      return undefined;
    }
    this.#burstSince ??= now;
    return now - this.#burstSince;
  }
}

/** The shortest delay of a job deferred during a burst (ms). */
const MIN_BURST_DELAY_MS = 1_000;

/**
 * When a process defers the jobs of a burst (the service's SEND_DEFER_RATE and SEND_DEFER_MAX_MS):
 * the accept path delays them in the queue (burstDelay), the worker holds those that come due
 * while the burst lasts (holdDuringBurst).
 */
export interface BurstDeferral {
  pressure: AcceptPressure;
  /** Accepted sends per second above which the process is in a burst; 0 never defers. */
  busyRate: number;
  /** The longest a job is deferred (0 never defers). */
  maxDelayMs: number;
}

/** The deferral of this process: its accept pressure and the configured rate and maximum. */
export function burstDeferral(config: Config): BurstDeferral {
  return { pressure: acceptPressure, busyRate: config.SEND_DEFER_RATE, maxDelayMs: config.SEND_DEFER_MAX_MS };
}

/** True when `d` defers anything at all. */
export function defersBursts(d: BurstDeferral): boolean {
  return d.busyRate > 0 && d.maxDelayMs > 0;
}

/** Waits while the process is in a burst, until at most `maxDelayMs` after `arrived` (ms since the epoch). */
export async function holdDuringBurst(d: BurstDeferral, arrived: number): Promise<void> {
  if (!defersBursts(d)) return;
  while (d.pressure.rate(Date.now()) > d.busyRate && Date.now() - arrived < d.maxDelayMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The queue delay of a job accepted now: 0 outside a burst. In a burst that has lasted t ms the
 * job waits t (at least 1 s, at most `maxDelayMs`) in the queue, where it costs nothing, rather than
 * being handed to this process's worker while the accept path needs the CPU: a burst that has lasted
 * t is likely to last about as long again, and a short one delays its sends little.
 */
export function burstDelay(d: BurstDeferral, now: number): number {
  if (!defersBursts(d)) return 0;
  const age = d.pressure.burstAge(now, d.busyRate);
  return age === undefined ? 0 : Math.min(d.maxDelayMs, Math.max(MIN_BURST_DELAY_MS, age));
}

/** Width (ms) of the due-time buckets of DeferredJobs. */
const DUE_BUCKET_MS = 100;

/**
 * How many jobs this process deferred are not yet due, for the `queue_jobs_deferred` gauge. Counted
 * in 100 ms buckets of due time (a job counts until the end of its bucket), and forgotten once due
 * whether or not anyone reads the gauge: at most SEND_DEFER_MAX_MS / 100 ms buckets are kept.
 */
export class DeferredJobs {
  #buckets = new Map<number, number>();

  /** Notes `count` jobs due at `dueAt` (ms since the epoch), deferred at `now`. */
  add(dueAt: number, count: number, now: number): void {
    const bucket = Math.ceil(dueAt / DUE_BUCKET_MS);
    this.#buckets.set(bucket, (this.#buckets.get(bucket) ?? 0) + count);
    this.#forget(now);
  }

  /** How many are not yet due at `now`. */
  waiting(now: number): number {
    this.#forget(now);
    let sum = 0;
    for (const count of this.#buckets.values()) sum += count;
    return sum;
  }

  /** Buckets held now (bounded by the longest delay / 100 ms). */
  get bucketsKept(): number {
    return this.#buckets.size;
  }

  #forget(now: number): void {
    for (const bucket of this.#buckets.keys()) {
      if (bucket * DUE_BUCKET_MS <= now) this.#buckets.delete(bucket);
    }
  }
}

/** The deferred jobs of this process, on `/metrics` as `queue_jobs_deferred`. */
export const deferredJobs = new DeferredJobs();

registry.gauge(
  "queue_jobs_deferred",
  "Group jobs this process enqueued with a delay during a burst of accepts, not yet due.",
  () => deferredJobs.waiting(Date.now()),
);

/** The pressure of this process (the API and the worker of one process share it). */
export const acceptPressure = new AcceptPressure();
