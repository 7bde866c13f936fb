import type { ActiveCount, ExpiringRecords, PutOptions, UnitOfWork, Versioned } from "../ports.ts";
import type { CheckedCommitter } from "./checked_commit.ts";
import { kvUnitOf } from "./unit.ts";

/**
 * Where a kind of record lives in KV: the record, and (for kinds whose active ones are counted) its
 * entry in its scope's index of active ones.
 */
export interface RecordKeys {
  record: (scope: string, id: string) => Deno.KvKey;
  active?: {
    entry: (scope: string, id: string) => Deno.KvKey;
    of: (scope: string) => Deno.KvKey;
  };
}

/**
 * Records in Deno KV, each written with its active-index entry in one atomic commit checked against
 * the versionstamp read; concurrent writes to other records share that commit (group commit).
 */
export class KvRecords implements ExpiringRecords {
  #kv: Deno.Kv;
  #committer: CheckedCommitter;
  #keys: RecordKeys;

  constructor(kv: Deno.Kv, committer: CheckedCommitter, keys: RecordKeys) {
    this.#kv = kv;
    this.#committer = committer;
    this.#keys = keys;
  }

  async get<T>(scope: string, id: string): Promise<Versioned<T> | null> {
    const entry = await this.#kv.get<T>(this.#keys.record(scope, id));
    return entry.versionstamp === null ? null : { value: entry.value as T, version: entry.versionstamp };
  }

  async put<T>(scope: string, id: string, value: T, options: PutOptions, unitOfWork?: UnitOfWork): Promise<boolean> {
    const key = this.#keys.record(scope, id);
    const activeKey = this.#keys.active?.entry(scope, id);
    if (!activeKey && options.activeUntil !== null) {
      throw new Error(`Cannot put record ${JSON.stringify(key)} as active: its kind keeps no active index`);
    }
    const keys = activeKey ? [key, activeKey] : [key];
    const build = (op: Deno.AtomicOperation) => {
      op.check({ key, versionstamp: options.expected });
      op.set(key, value, { expireIn: Math.max(1, options.ttlMs) });
      if (!activeKey) return;
      if (options.activeUntil === null) op.delete(activeKey);
      else op.set(activeKey, options.activeUntil, { expireIn: Math.max(1, options.activeUntil - Date.now()) });
    };
    if (!unitOfWork) return await this.#committer.commit(keys, build);
    kvUnitOf(unitOfWork).add(keys, build);
    return true;
  }

  async countActive(scope: string, now: number): Promise<ActiveCount> {
    let count = 0;
    let soonest = Infinity;
    // KV may still list an entry past its expireIn: its value, the end, decides.
    const index = this.#keys.active;
    if (!index) throw new Error("Cannot count active records: this kind keeps no active index");
    for await (const entry of this.#kv.list<number>({ prefix: index.of(scope) })) {
      if (entry.value <= now) continue;
      count++;
      soonest = Math.min(soonest, entry.value);
    }
    return { count, soonestEnd: Number.isFinite(soonest) ? soonest : null };
  }
}
