import type { UnitOfWork } from "../ports.ts";
import type { CheckedCommitter } from "./checked_commit.ts";

/**
 * A unit of work on Deno KV: the checks and mutations of one atomic operation, collected while the
 * work runs and committed once it returns (KV checks versions at commit, not at each write).
 */
export class KvUnit implements UnitOfWork {
  readonly engine = "kv";
  /** The keys the unit checks or writes: units on different keys may share a commit. */
  readonly keys: Deno.KvKey[] = [];
  readonly builds: ((op: Deno.AtomicOperation) => void)[] = [];

  /** Adds writes to the unit, touching `keys`. */
  add(keys: Deno.KvKey[], build: (op: Deno.AtomicOperation) => void): void {
    this.keys.push(...keys);
    this.builds.push(build);
  }
}

/** Runs `work` and commits what it added in one atomic operation (shared with concurrent units). */
export async function kvAtomically(
  committer: CheckedCommitter,
  work: (unit: UnitOfWork) => Promise<void> | void,
): Promise<boolean> {
  const unit = new KvUnit();
  await work(unit);
  if (unit.builds.length === 0) return true;
  return await committer.commit(unit.keys, (op) => {
    for (const build of unit.builds) build(op);
  });
}

/** The KV unit of a unit of work, which must be a KV one. */
export function kvUnitOf(unit: UnitOfWork): KvUnit {
  if (!(unit instanceof KvUnit)) throw new Error(`Cannot write to Deno KV in a unit of work on ${unit.engine}`);
  return unit;
}
