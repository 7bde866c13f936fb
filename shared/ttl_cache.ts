interface Entry<V> {
  value: Promise<V>;
  expires: number;
}

/**
 * A small time-bounded cache of look-ups (templates, identities, balances): concurrent callers of
 * one key share one load, and an entry lives `ttlMs`. A failed load is not kept.
 */
export class TtlCache<V> {
  #entries = new Map<string, Entry<V>>();
  #ttlMs: number;
  #max: number;

  constructor(ttlMs: number, max = 10_000) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  /** The cached value of `key`, loading it with `load` when absent or expired. */
  get(key: string, now: number, load: () => Promise<V>): Promise<V> {
    const hit = this.#entries.get(key);
    if (hit && hit.expires > now) return hit.value;
    const value = load();
    this.#entries.delete(key);
    this.#entries.set(key, { value, expires: now + this.#ttlMs });
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    });
    if (this.#entries.size > this.#max) {
      // Oldest first: Map keeps insertion order.
      for (const k of this.#entries.keys()) {
        this.#entries.delete(k);
        if (this.#entries.size <= this.#max * 0.9) break;
      }
    }
    return value;
  }

  /** Forgets `key`. */
  delete(key: string): void {
    this.#entries.delete(key);
  }

  /** Forgets every key. */
  clear(): void {
    this.#entries.clear();
  }
}
