interface Entry<T> {
  value: T;
  weight: number;
  /** Date.now() when added (kept only when the batcher holds groups back). */
  arrived: number;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** How a Batcher groups the values of its callers. */
export interface BatcherOptions {
  /** The most weight one group carries; a single heavier value still runs, alone. */
  maxWeight: number;
  /** The most values one group carries. */
  maxCount?: number;
  /**
   * Awaited before each group is taken, with the time (Date.now()) the oldest waiting value was
   * added: a caller may hold groups back (values added meanwhile join the group).
   */
  hold?: (oldestArrived: number) => Promise<void>;
  /**
   * When a group of several values fails, run each of its values again alone, one after another in
   * the order they arrived, and settle each caller with the outcome of its own run. Without it one
   * caller's bad value (for a KV commit: a value over 64 KiB, a key too large) fails every innocent
   * caller grouped with it, and a group that fails only for being the sum of its values (a commit
   * over 800 KiB) fails them all. Only for a runner that is all-or-nothing (one atomic commit): a
   * runner that may have done part of a failed group's work would do that part again. Sequential,
   * not concurrent: a failed group is rare (the cost of a retry is one run a value), and running in
   * arrival order keeps the outcome of the group run (of two writes to one key, the later lands).
   */
  retryAlone?: boolean;
  /**
   * How many groups may run at once (1 unless told), for a runner that spends most of its time
   * waiting (a delivery pass, on its providers' answers) and whose groups need no order between them.
   */
  concurrency?: number;
}

/**
 * Gathers the values of concurrent callers into groups handled by one runner at a time (or
 * `concurrency`: a KV group commit, a delivery pass, a batch of workflow starts): under load a group holds many callers'
 * values and costs about what one would. Each caller resolves once the group holding its value is
 * done, or rejects with that group's error (with `retryAlone`, with the error of its value run alone).
 */
export class Batcher<T> {
  #run: (values: T[]) => Promise<void>;
  #options: BatcherOptions;
  #waiting: Entry<T>[] = [];
  #running = 0;

  constructor(run: (values: T[]) => Promise<void>, options: BatcherOptions) {
    this.#run = run;
    this.#options = options;
  }

  /** Adds `value` (counting `weight` towards the group's maximum) to the next group and waits for it. */
  add(value: T, weight = 1): Promise<void> {
    return new Promise((resolve, reject) => {
      const arrived = this.#options.hold ? Date.now() : 0;
      this.#waiting.push({ value, weight, arrived, resolve, reject });
      if (this.#running < (this.#options.concurrency ?? 1)) this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running++;
    // Let the callers of this tick join the first group.
    await Promise.resolve();
    try {
      while (this.#waiting.length > 0) {
        await this.#options.hold?.(this.#waiting[0].arrived);
        // Another runner may have taken the values while this one was held back.
        if (this.#waiting.length === 0) break;
        const group = this.#take();
        try {
          await this.#run(group.map((e) => e.value));
          for (const e of group) e.resolve();
        } catch (err) {
          if (this.#options.retryAlone && group.length > 1) await this.#runAlone(group);
          else for (const e of group) e.reject(err);
        }
      }
    } finally {
      this.#running--;
    }
  }

  /** Runs each value of a failed group alone, in order, settling its caller with that run's outcome. */
  async #runAlone(group: Entry<T>[]): Promise<void> {
    for (const e of group) {
      try {
        await this.#run([e.value]);
        e.resolve();
      } catch (err) {
        e.reject(err);
      }
    }
  }

  /** The next group: as many waiting values as the limits allow, at least one. */
  #take(): Entry<T>[] {
    const { maxWeight, maxCount = Infinity } = this.#options;
    let taken = 0;
    let weight = 0;
    while (
      taken < this.#waiting.length && taken < maxCount &&
      (taken === 0 || weight + this.#waiting[taken].weight <= maxWeight)
    ) {
      weight += this.#waiting[taken].weight;
      taken++;
    }
    return this.#waiting.splice(0, taken);
  }
}
