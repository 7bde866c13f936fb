import type { SendState } from "./send_state.ts";

/**
 * The hot-state ports: what the roles need from the engine that holds short-lived shared state
 * (Deno KV, or Postgres for replicas). Each has one contract suite run against both adapters
 * (shared/engine/*_contract_test.ts); what an engine needs to be fast (group commit, buffered
 * counts) stays inside its adapter.
 */

/** The outcome of counting one hit against a limit. */
export interface Hit {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** When the window ends, or (sliding) when the hits that fill it have left it: ms since the epoch. */
  resetAt: number;
}

/**
 * Counters over time windows: API rate limits, trigger limits, OTP send limits. Exact within a
 * process; another process's hits count once flushed (each adapter flushes a few times a second).
 */
export interface WindowCounters {
  /** Counts one hit of `subject` under `name`, unless `limit` hits were counted in its fixed window of `windowMs`. */
  hit(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit>;
  /** Counts one hit unless `limit` hits were counted in the last `windowMs` (a sliding window). */
  hitSliding(name: string, subject: string, limit: number, windowMs: number, now: number): Promise<Hit>;
  /** Makes every hit counted so far visible to other processes. */
  flush(): Promise<void>;
  /** Flushes and stops background work. */
  close(): Promise<void>;
}

/** The first answer to a request with an Idempotency-Key. */
export interface IdempotentAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What is recorded under an Idempotency-Key: a request still running, or its answer. */
export type IdempotencyRecord =
  | { state: "in_flight"; fingerprint: string }
  | { state: "done"; fingerprint: string; answer: IdempotentAnswer };

/** The outcome of claiming a key: ours to run, or the record someone else holds. */
export type IdempotencyClaim = { claimed: true } | { claimed: false; record: IdempotencyRecord };

/** How often a claim reads again when the key changes under it, before answering it as in flight. */
export const CLAIM_ROUNDS = 5;

/** A claim of a key by a request: the fingerprint of what it asks, and how long it may take. */
export interface ClaimOptions {
  fingerprint: string;
  /** How long the claim holds unless completed or released (a crashed request's claim ends then). */
  inFlightMs: number;
}

/** The answer that completes a claim, and how long it is kept. */
export interface CompleteOptions {
  fingerprint: string;
  answer: IdempotentAnswer;
  ttlMs: number;
}

/** Idempotency records: of racing claims on one key exactly one wins; the winner completes or releases it. */
export interface IdempotencyStore {
  /** Claims `key` of `scope` for a request, unless another holds it. */
  claim(scope: string, key: string, options: ClaimOptions): Promise<IdempotencyClaim>;
  /** Records the answer of a claimed key; false when it was too large to keep (the key is then released). */
  complete(scope: string, key: string, options: CompleteOptions): Promise<boolean>;
  /** Gives a claim up without an answer, so that a retry runs again. */
  release(scope: string, key: string): Promise<void>;
}

/** A record as read, with the version a compare-and-set names. */
export interface Versioned<T> {
  value: T;
  version: string;
}

/** How a record is written. */
export interface PutOptions {
  /** The version read (null: the record must not exist); the write fails when another came first. */
  expected: string | null;
  /** How long the record is kept at least (then it may be swept). */
  ttlMs: number;
  /** Until when (ms since the epoch) the record counts among its scope's active ones; null: not active. */
  activeUntil: number | null;
}

/** The active records of a scope at some time. */
export interface ActiveCount {
  count: number;
  /** The soonest `activeUntil` among them; null when there are none. */
  soonestEnd: number | null;
}

/**
 * Writes that commit together or not at all: hot-state changes and the jobs that follow them. An
 * opaque handle, made by `HotState.atomically`; each engine's adapters recognise their own (a Deno KV
 * atomic operation, or a Postgres transaction) and refuse another engine's.
 */
export interface UnitOfWork {
  readonly engine: "kv" | "postgres";
}

/**
 * Answers the version check that lost inside a unit of work: the unit then commits nothing and
 * `atomically` answers false. Adapters throw it; callers never see it.
 */
export class LostRace extends Error {
  constructor() {
    super("Cannot commit: a record changed since it was read");
  }
}

/** Records with expiry, changed only by compare-and-set (OTP sessions, per team). */
export interface ExpiringRecords {
  /** The record `id` of `scope`, or null. */
  get<T>(scope: string, id: string): Promise<Versioned<T> | null>;
  /**
   * Writes `value` when the record is still at `options.expected`; false when another write came first.
   * Inside `unitOfWork` the write commits with the unit, and a lost check makes the whole unit answer
   * false (the call itself then answers true).
   */
  put<T>(scope: string, id: string, value: T, options: PutOptions, unitOfWork?: UnitOfWork): Promise<boolean>;
  /** How many records of `scope` are active at `now`. */
  countActive(scope: string, now: number): Promise<ActiveCount>;
}

/**
 * The kinds of records the roles keep, each a namespace of its own. Where a kind's ids are unique
 * on their own (trigger and execution ids), its records are kept under the scope "".
 */
export type RecordKind =
  | "otp_sessions"
  | "send_triggers"
  | "execution_triggers"
  /** A number prefix the OTP fraud guard blocked (scope: the team; id: the prefix). */
  | "otp_fraud_blocks"
  /** A verified OTP session under a number prefix, active for the guard's window (scope: team:prefix). */
  | "otp_fraud_verified"
  /** A dashboard sign-in subject locked after failures (scope: "account" or "ip"). */
  | "dashboard_sign_in_locks"
  /** Marks of webhook attempts enqueued (a retry, or an attempt put off): a job run twice enqueues each once. */
  | "webhook_enqueued"
  | "send_dispatch"
  | "send_push_pace";

/** Every hot-state port of one engine, and how to release them. */
export interface HotState {
  counters: WindowCounters;
  idempotency: IdempotencyStore;
  otpSessions: ExpiringRecords;
  /** The records of one kind. */
  records(kind: RecordKind): ExpiringRecords;
  /** The state of each send while it runs (see send_state.ts). */
  sendState: SendState;
  /**
   * Runs `work`; what it writes through the unit (records, jobs) commits together once it returns, or
   * nothing does. Answers false, with nothing written, when a compare-and-set in it lost a race: the
   * caller reads again and retries. Throwing from `work` writes nothing and rethrows.
   */
  atomically(work: (unitOfWork: UnitOfWork) => Promise<void> | void): Promise<boolean>;
  close(): Promise<void>;
}
