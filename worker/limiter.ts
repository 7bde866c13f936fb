/** A caller waiting for a place; `cancelled` once it stopped waiting (see {@linkcode Limiter.acquire}). */
interface Waiter {
  grant: () => void;
  cancelled: boolean;
}

/** Runs at most `size` tasks at once; the others wait their turn in order. */
export class Limiter {
  #size: number;
  #active = 0;
  #waiting: Waiter[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Runs `task` once a place is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /**
   * Takes a place, waiting in turn for at most `maxWaitMs`: answers whether it got one (then the
   * caller must `release` it).
   */
  acquire(maxWaitMs = Infinity): Promise<boolean> {
    if (this.#active < this.#size) {
      this.#active++;
      return Promise.resolve(true);
    }
    if (maxWaitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waiter: Waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
        },
        cancelled: false,
      };
      if (Number.isFinite(maxWaitMs)) {
        timer = setTimeout(() => {
          waiter.cancelled = true;
          resolve(false);
        }, maxWaitMs);
      }
      this.#waiting.push(waiter);
    });
  }

  /** Gives a place back: to the first caller still waiting, if any. */
  release(): void {
    while (this.#waiting.length > 0) {
      const next = this.#waiting.shift()!;
      if (!next.cancelled) return next.grant();
    }
    this.#active--;
  }
}

/**
 * One {@linkcode Limiter} a key (an endpoint, say): at most `size` tasks of a key run at once, whatever
 * the number of callers. A key's limiter is dropped once nothing of it runs or waits.
 */
export class KeyedLimiter {
  #size: number;
  #limiters = new Map<string, { limiter: Limiter; users: number }>();

  constructor(size: number) {
    this.#size = size;
  }

  /**
   * Runs `task` once a place of `key` is free, unless none is within `maxWaitMs`: answers whether it
   * ran.
   */
  async tryRun(key: string, maxWaitMs: number, task: () => Promise<void>): Promise<boolean> {
    let entry = this.#limiters.get(key);
    if (!entry) {
      entry = { limiter: new Limiter(this.#size), users: 0 };
      this.#limiters.set(key, entry);
    }
    entry.users++;
    try {
      if (!await entry.limiter.acquire(maxWaitMs)) return false;
      try {
        await task();
      } finally {
        entry.limiter.release();
      }
      return true;
    } finally {
      if (--entry.users === 0) this.#limiters.delete(key);
    }
  }

  /** Keys with a task running or waiting. */
  get keys(): number {
    return this.#limiters.size;
  }
}
