/**
 * Waiting for the service's backlog: sends are accepted (and deferred during a burst, see
 * SEND_DEFER_RATE) faster than they are delivered, so after a send scenario the worker keeps
 * delivering. The bench waits for it before the next measurement, and reports how fast it went.
 */
import { progress } from "./measure.ts";

/** Counters of GET /metrics that move while the worker has work: deliveries and queue jobs. */
export interface WorkCounters {
  deliveries: number;
  jobs: number;
  /** Group jobs the service deferred during the burst and that are not yet due (a gauge). */
  deferred: number;
}

/** Sums the samples of a Prometheus text counter (every label set). */
export function sumCounter(text: string, name: string): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== "{" && rest[0] !== " ") continue;
    const value = Number(line.slice(line.lastIndexOf(" ") + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/** Reads the work counters of the service. */
export async function workCounters(url: string): Promise<WorkCounters> {
  const res = await fetch(`${url}/metrics`);
  const text = await res.text();
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  return {
    deliveries: sumCounter(text, "message_deliveries_total"),
    jobs: sumCounter(text, "queue_jobs_total"),
    deferred: sumCounter(text, "queue_jobs_deferred"),
  };
}

/** What a drain did. */
export interface Drained {
  /** Deliveries counted from the first reading to the last change. */
  deliveries: number;
  /** Seconds from the first reading to the last change. */
  seconds: number;
  /** True when the counters were still moving at the time limit. */
  timedOut: boolean;
}

/**
 * Waits until no deferred job is waiting and the service's deliveries and queue jobs have not moved
 * for `quietMs` (at most `limitMs`); answers how many deliveries it saw and how long they took.
 */
export async function drain(url: string, options: { quietMs?: number; limitMs?: number } = {}): Promise<Drained> {
  const quietMs = options.quietMs ?? 1500;
  const limitMs = options.limitMs ?? 180_000;
  const started = performance.now();
  const first = await workCounters(url);
  let last = first;
  let changedAt = started;
  while (true) {
    await new Promise((r) => setTimeout(r, 100));
    const now = performance.now();
    const current = await workCounters(url);
    if (current.deliveries !== last.deliveries || current.jobs !== last.jobs || current.deferred > 0) {
      last = current;
      changedAt = now;
    }
    const timedOut = now - started > limitMs;
    if (now - changedAt >= quietMs || timedOut) {
      return { deliveries: last.deliveries - first.deliveries, seconds: (changedAt - started) / 1000, timedOut };
    }
  }
}

/** Drains the service after a send measurement; answers the row's note ("drained N in S s"). */
export async function settleSends(url: string, quick = false): Promise<string> {
  const d = await drain(url, { quietMs: quick ? 500 : 1500 });
  const rate = d.seconds > 0 ? ` (${Math.round(d.deliveries / d.seconds).toLocaleString("en-US")}/s)` : "";
  const note = `backlog: ${d.deliveries.toLocaleString("en-US")} deliveries in ${d.seconds.toFixed(1)} s${rate}` +
    (d.timedOut ? ", still going" : "");
  progress(note);
  return note;
}
