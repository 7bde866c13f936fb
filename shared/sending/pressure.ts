import type { Config } from "../config.ts";
import { registry } from "../metrics.ts";
import { spooled } from "../engine/kv/spool.ts";

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
}

/**
 * When a process defers the jobs of a burst (the service's SEND_DEFER_RATE and SEND_DEFER_MAX_MS):
 * the accept path spools them (spool.ts) and the worker holds the spool's drain jobs and any group
 * job that comes due while the burst lasts (holdDuringBurst).
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
  // The spool a burst's jobs wait in is Deno KV's (see spool.ts): with ENGINE=postgres nothing is deferred.
  const busyRate = config.ENGINE === "kv" ? config.SEND_DEFER_RATE : 0;
  return { pressure: acceptPressure, busyRate, maxDelayMs: config.SEND_DEFER_MAX_MS };
}

/** True when `d` defers anything at all. */
export function defersBursts(d: BurstDeferral): boolean {
  return d.busyRate > 0 && d.maxDelayMs > 0;
}

/** Waits while the process is in a burst, until at most `maxDelayMs` after `arrived` (ms since the epoch). */
export async function holdDuringBurst(d: BurstDeferral, arrived: number): Promise<void> {
  if (!defersBursts(d)) return;
  while (inBurst(d, Date.now()) && Date.now() - arrived < d.maxDelayMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** True while this process accepts more than `d.busyRate` items a second (never when `d` defers nothing). */
export function inBurst(d: BurstDeferral, now: number): boolean {
  return defersBursts(d) && d.pressure.rate(now) > d.busyRate;
}

registry.gauge(
  "queue_jobs_deferred",
  "Group jobs this process spooled during a burst of accepts and has not yet moved to the queue.",
  () => spooled.pages,
);

/** The pressure of this process (the API and the worker of one process share it). */
export const acceptPressure = new AcceptPressure();
