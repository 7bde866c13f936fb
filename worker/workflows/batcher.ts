interface Waiting<T> {
  items: T[];
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Gathers the items of concurrent callers (queue jobs running at once) into larger batches handled
 * by one runner at a time: under load, a batch holds many jobs' items and costs a few statements
 * for the lot. Each caller resolves once the batch holding its items is done (so its queue message
 * is acknowledged only then), or rejects with that batch's error.
 */
export class Batcher<T> {
  #run: (items: T[]) => Promise<void>;
  #max: number;
  #waiting: Waiting<T>[] = [];
  #running = false;

  constructor(run: (items: T[]) => Promise<void>, max: number) {
    this.#run = run;
    this.#max = max;
  }

  /** Adds items to the next batch and waits for it. */
  add(items: T[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ items, resolve, reject });
      if (!this.#running) this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    await Promise.resolve();
    try {
      while (this.#waiting.length > 0) {
        const group: Waiting<T>[] = [];
        let count = 0;
        while (this.#waiting.length > 0 && (group.length === 0 || count + this.#waiting[0].items.length <= this.#max)) {
          const next = this.#waiting.shift()!;
          count += next.items.length;
          group.push(next);
        }
        try {
          await this.#run(group.flatMap((g) => g.items));
          for (const g of group) g.resolve();
        } catch (err) {
          for (const g of group) g.reject(err);
        }
      }
    } finally {
      this.#running = false;
    }
  }
}
