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

/** The pressure of this process (the API and the worker of one process share it). */
export const acceptPressure = new AcceptPressure();
