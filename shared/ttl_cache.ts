import type { Changes } from "./changes.ts";

interface Entry<V> {
  value: Promise<V>;
  expires: number;
}

/**
 * A small time-bounded cache of look-ups (templates, identities, balances): concurrent callers of
 * one key share one load, and an entry lives `ttlMs`. A failed load is not kept. With `forgetOn`,
 * every entry is forgotten once that count of changes has moved.
 */
export class TtlCache<V> {
  #entries = new Map<string, Entry<V>>();
  #ttlMs: number;
  #max: number;
  #changes: { moved(): boolean } | undefined;

  constructor(ttlMs: number, options: { max?: number; forgetOn?: Changes } = {}) {
    this.#ttlMs = ttlMs;
    this.#max = options.max ?? 10_000;
    this.#changes = options.forgetOn?.watch();
  }

  /** The cached value of `key`, loading it with `load` when absent or expired. */
  get(key: string, now: number, load: () => Promise<V>): Promise<V> {
    if (this.#changes?.moved()) this.#entries.clear();
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
}
