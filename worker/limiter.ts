/** Runs at most `size` tasks at once; the others wait their turn in order. */
export class Limiter {
  #size: number;
  #active = 0;
  #waiting: (() => void)[] = [];

  constructor(size: number) {
    this.#size = size;
  }

  /** Runs `task` once a place is free. */
  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.#active >= this.#size) await new Promise<void>((resolve) => this.#waiting.push(resolve));
    else this.#active++;
    try {
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#active--;
    }
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

  /** Runs `task` once a place of `key` is free. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    let entry = this.#limiters.get(key);
    if (!entry) {
      entry = { limiter: new Limiter(this.#size), users: 0 };
      this.#limiters.set(key, entry);
    }
    entry.users++;
    try {
      return await entry.limiter.run(task);
    } finally {
      if (--entry.users === 0) this.#limiters.delete(key);
    }
  }

  /** Keys with a task running or waiting. */
  get keys(): number {
    return this.#limiters.size;
  }
}
