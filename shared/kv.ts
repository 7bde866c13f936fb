import { Batcher } from "./batcher.ts";

/** Opens the Deno KV database at `path` (`:memory:` in tests; undefined on Deno Deploy). */
export async function openKv(path?: string): Promise<Deno.Kv> {
  if (path && path !== ":memory:") {
    const dir = path.replace(/[^/]*$/, "");
    if (dir) await Deno.mkdir(dir, { recursive: true });
  }
  return await Deno.openKv(path);
}

/** Every KV key the service writes comes from one of these builders. */
export const kvKeys = {
  /** Requests counted for one API key in one hour window. */
  rateLimit: (keyId: string, window: number) => ["rate_limit", keyId, window] as const,
  /** A named fixed-window counter (OTP limits, trigger limits …). */
  limiter: (name: string, subject: string, window: number) => ["limiter", name, subject, window] as const,
  /** The times of a subject's latest hits under a named sliding-window limit (OTP limits). */
  slidingLimiter: (name: string, subject: string) => ["limiter_log", name, subject] as const,
  /** Set with the enqueue of a webhook attempt (a retry, or one put off): a job run twice enqueues it once. */
  webhookEnqueued: (id: string) => ["webhook_enqueued", id] as const,
  /** The stored first answer of an Idempotency-Key. */
  idempotency: (teamId: string, key: string) => ["idempotency", teamId, key] as const,
  /** Until when a dashboard sign-in subject ("account" or "ip") is locked (api/dashboard/throttle.ts). */
  signInLock: (kind: string, value: string) => ["dashboard_sign_in_lock", kind, value] as const,
  /** OTP sessions of a team, and the index of its active (unfinished, unexpired) ones. */
  otp: {
    session: (teamId: string, id: string) => ["otp_sessions", teamId, id] as const,
    active: (teamId: string, id: string) => ["otp_active", teamId, id] as const,
    activeOfTeam: (teamId: string) => ["otp_active", teamId] as const,
    /** A number prefix of a team blocked by the fraud guard (otp/fraud_guard.ts). */
    fraudBlock: (teamId: string, prefix: string) => ["otp_fraud_blocks", teamId, prefix] as const,
    /** A verified session under a number prefix (scope "team:prefix"), and the index the guard counts. */
    fraudVerified: (scope: string, sessionId: string) => ["otp_fraud_verified", scope, sessionId] as const,
    fraudVerifiedActive: (scope: string, sessionId: string) => ["otp_fraud_verified_active", scope, sessionId] as const,
    fraudVerifiedOf: (scope: string) => ["otp_fraud_verified_active", scope] as const,
  },
};

type Build = (op: Deno.AtomicOperation) => void;

/** Deno KV's limit on mutations in one atomic operation. */
const MAX_MUTATIONS = 1000;

/**
 * Group commit: writes from concurrent callers share one atomic KV commit (one SQLite fsync).
 * Each caller's promise resolves only after the commit that holds its writes. When a group's commit
 * fails (one caller's value over 64 KiB or key too large, or the group over 800 KiB or 1000
 * mutations together), nothing of it was written (the commit is atomic), so each caller's writes
 * are committed again alone: the others land and only a caller whose own writes KV refuses is
 * rejected, with KV's error. Builders must not add checks (a failing one costs that retry and
 * answers its caller with an error, not a result), and may be called more than once.
 */
export class KvCommitter {
  #kv: Deno.Kv;
  #groups: Batcher<Build>;

  constructor(kv: Deno.Kv) {
    this.#kv = kv;
    this.#groups = new Batcher((builds) => this.#commit(builds), { maxWeight: MAX_MUTATIONS, retryAlone: true });
  }

  /** Adds `build`'s mutations (at most `mutations` of them) to the next commit and waits for it. */
  commit(build: Build, mutations = 1): Promise<void> {
    return this.#groups.add(build, mutations);
  }

  async #commit(builds: Build[]): Promise<void> {
    const op = this.#kv.atomic();
    for (const build of builds) build(op);
    const res = await op.commit();
    if (!res.ok) throw new Error("Cannot commit KV group: unexpected check failure");
  }
}
