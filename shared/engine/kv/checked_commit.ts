/** Operations sharing one commit at most (20 sessions of ≤ 40 KiB stay under KV's 800 KiB per commit). */
const MAX_GROUP = 20;

interface Pending {
  keys: string[];
  build: (op: Deno.AtomicOperation) => void;
  resolve: (ok: boolean) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for operations that carry checks (a session's versionstamp): concurrent callers'
 * operations on different keys share one atomic commit (one SQLite fsync). When the shared commit
 * fails — some caller's check no longer holds — each operation is committed on its own, so only the
 * callers whose checks failed see `false` and read again. Operations on the same key never share a
 * commit: both would pass their checks and the later write would lose the earlier one.
 */
export class CheckedCommitter {
  #kv: Deno.Kv;
  #queue: Pending[] = [];
  #running = false;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
  }

  /** Commits `build`'s checks and mutations (touching `keys`); false when a check failed. */
  commit(keys: Deno.KvKey[], build: (op: Deno.AtomicOperation) => void): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#queue.push({ keys: keys.map((k) => JSON.stringify(k)), build, resolve, reject });
      if (!this.#running) this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#running = true;
    // Let the callers of this tick join the first commit.
    await Promise.resolve();
    try {
      while (this.#queue.length > 0) await this.#commitGroup(this.#take());
    } finally {
      this.#running = false;
    }
  }

  #take(): Pending[] {
    const group: Pending[] = [];
    const rest: Pending[] = [];
    const taken = new Set<string>();
    for (const pending of this.#queue) {
      if (group.length < MAX_GROUP && pending.keys.every((k) => !taken.has(k))) {
        group.push(pending);
        for (const k of pending.keys) taken.add(k);
      } else {
        rest.push(pending);
      }
    }
    this.#queue = rest;
    return group;
  }

  async #commitGroup(group: Pending[]): Promise<void> {
    if (group.length > 1) {
      try {
        const op = this.#kv.atomic();
        for (const pending of group) pending.build(op);
        if ((await op.commit()).ok) {
          for (const pending of group) pending.resolve(true);
          return;
        }
      } catch {
        // Too large together: each on its own below.
      }
    }
    await Promise.all(group.map(async (pending) => {
      try {
        const op = this.#kv.atomic();
        pending.build(op);
        pending.resolve((await op.commit()).ok);
      } catch (err) {
        pending.reject(err);
      }
    }));
  }
}

const committers = new WeakMap<Deno.Kv, CheckedCommitter>();

/** The checked committer of a KV database (one per database, made on first use). */
export function checkedCommitter(kv: Deno.Kv): CheckedCommitter {
  let committer = committers.get(kv);
  if (!committer) {
    committer = new CheckedCommitter(kv);
    committers.set(kv, committer);
  }
  return committer;
}
