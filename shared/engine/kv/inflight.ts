import { log } from "../../log.ts";
import { JOB_BACKOFF_MS } from "../../backoff.ts";

/** KV keys of the journal: one heartbeat per process, and the queue messages it is running. */
export const inflightKeys = {
  heartbeat: (processId: string) => ["worker_heartbeat", processId] as const,
  heartbeats: () => ["worker_heartbeat"] as const,
  job: (processId: string, token: string) => ["worker_inflight", processId, token] as const,
  jobsOf: (processId: string) => ["worker_inflight", processId] as const,
};

/** Options of {@linkcode InflightJournal}. */
export interface JournalOptions {
  /** How soon after a job ends its entry is deleted (deletions are batched). */
  flushMs?: number;
  /** How often the heartbeat is written and other processes' journals are looked at. */
  heartbeatMs?: number;
  /** A process whose heartbeat is older than this is dead (Deno KV's own running-message deadline is 5 s). */
  staleMs?: number;
  now?: () => number;
}

/** Messages written per commit: a queue message is at most 64 KiB, a commit at most 800 KiB. */
const SETS_PER_COMMIT = 10;
const DELETES_PER_COMMIT = 500;
const DAY_MS = 86_400_000;

/**
 * Why: when a process dies (SIGKILL, OOM, a lost container), the Deno KV queue messages it was running
 * stay "running" until the KV file is opened with their deadline (5 s after the last keepalive) past,
 * or until its cleanup, which runs once a minute: a restart within a few seconds of the crash leaves
 * the interrupted jobs waiting about 60 s. The journal keeps the messages this process is running in
 * KV (written before each starts, removed after it ends) beside a heartbeat; a process that sees
 * another's heartbeat stale enqueues that process's journaled messages again. Every job handler is
 * idempotent, so the copy and the original (redelivered by the queue later) do the work once.
 */
export class InflightJournal {
  readonly processId = crypto.randomUUID();
  #kv: Deno.Kv;
  #flushMs: number;
  #heartbeatMs: number;
  #staleMs: number;
  #now: () => number;
  #running = new Map<string, unknown>();
  /** Started and not yet written (their entries go in the next write). */
  #unwritten = new Set<string>();
  /** Written and since ended (their entries go in the next write's deletes). */
  #ended = new Set<string>();
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  #heartbeatTimer: ReturnType<typeof setInterval> | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #soon: Promise<void> | undefined;

  constructor(kv: Deno.Kv, options: JournalOptions = {}) {
    this.#kv = kv;
    this.#flushMs = options.flushMs ?? 100;
    this.#heartbeatMs = options.heartbeatMs ?? 1_000;
    this.#staleMs = options.staleMs ?? 5_000;
    this.#now = options.now ?? Date.now;
  }

  /** Starts the heartbeat (and the look at other processes' journals that goes with it). */
  start(): void {
    const beat = async () => {
      try {
        await this.#kv.set(inflightKeys.heartbeat(this.processId), { at: this.#now() }, { expireIn: DAY_MS });
        await this.recover();
      } catch (err) {
        log("warn", "in-flight journal heartbeat failed", { error: String(err) });
      }
    };
    beat();
    const timer = setInterval(beat, this.#heartbeatMs);
    Deno.unrefTimer(timer);
    this.#heartbeatTimer = timer;
  }

  /** Stops the timers (the journal entries of jobs cut off stay, for the next process to take up). */
  stop(): void {
    clearInterval(this.#heartbeatTimer);
    clearTimeout(this.#flushTimer);
    this.#heartbeatTimer = this.#flushTimer = undefined;
  }

  /**
   * Runs a queue message's handler, journaled while it runs: the handler starts once its entry is
   * written (jobs starting together share one commit), and the entry is deleted lazily after it ends.
   */
  async track<T>(message: unknown, run: () => Promise<T>): Promise<T> {
    const token = crypto.randomUUID();
    this.#running.set(token, message);
    this.#unwritten.add(token);
    try {
      await this.#flushSoon();
    } catch (err) {
      // The journal only shortens a recovery: a job runs even when it cannot be written.
      log("warn", "in-flight journal write failed", { error: String(err) });
    }
    try {
      return await run();
    } finally {
      this.#running.delete(token);
      // Never written: nothing to delete. Written (or being written): deleted by a later write.
      if (!this.#unwritten.delete(token)) this.#ended.add(token);
      this.#schedule();
    }
  }

  /** A write as soon as the current task ends (shared by every job starting in it). */
  #flushSoon(): Promise<void> {
    this.#soon ??= Promise.resolve().then(() => {
      this.#soon = undefined;
      return this.flush();
    });
    return this.#soon;
  }

  #schedule(): void {
    if (this.#flushTimer !== undefined) return;
    const timer = setTimeout(() => {
      this.#flushTimer = undefined;
      this.flush().catch((err) => log("warn", "in-flight journal write failed", { error: String(err) }));
    }, this.#flushMs);
    Deno.unrefTimer(timer);
    this.#flushTimer = timer;
  }

  /** Writes the journal: messages started since the last write, and deletes those finished. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#write(), () => this.#write());
    return this.#flushing;
  }

  async #write(): Promise<void> {
    // Taken as sets of tokens, so a write costs what changed since the last, not what is running.
    const started = [...this.#unwritten];
    this.#unwritten.clear();
    for (let i = 0; i < started.length; i += SETS_PER_COMMIT) {
      const batch = started.slice(i, i + SETS_PER_COMMIT).filter((t) => this.#running.has(t));
      const op = this.#kv.atomic();
      for (const t of batch) op.set(inflightKeys.job(this.processId, t), this.#running.get(t), { expireIn: DAY_MS });
      try {
        await op.commit();
      } catch (err) {
        // Not written: those still running are written next time; those ended need no delete.
        for (const t of started.slice(i)) if (this.#running.has(t)) this.#unwritten.add(t);
        for (const t of started.slice(i)) this.#ended.delete(t);
        throw err;
      }
    }
    const finished = [...this.#ended];
    this.#ended.clear();
    for (let i = 0; i < finished.length; i += DELETES_PER_COMMIT) {
      const op = this.#kv.atomic();
      const batch = finished.slice(i, i + DELETES_PER_COMMIT);
      for (const t of batch) op.delete(inflightKeys.job(this.processId, t));
      try {
        await op.commit();
      } catch (err) {
        for (const t of finished.slice(i)) this.#ended.add(t);
        throw err;
      }
    }
  }

  /**
   * Enqueues again the journaled messages of every other process whose heartbeat is stale, and
   * drops that process's journal. Answers how many messages were enqueued.
   */
  async recover(): Promise<number> {
    let enqueued = 0;
    const now = this.#now();
    for await (const beat of this.#kv.list<{ at: number }>({ prefix: inflightKeys.heartbeats() })) {
      const processId = beat.key[1] as string;
      if (processId === this.processId || now - (beat.value?.at ?? 0) < this.#staleMs) continue;
      for await (const entry of this.#kv.list({ prefix: inflightKeys.jobsOf(processId) })) {
        // Checked: of two processes recovering at once, one enqueues it.
        const res = await this.#kv.atomic()
          .check(entry)
          .delete(entry.key)
          .enqueue(entry.value, { backoffSchedule: JOB_BACKOFF_MS })
          .commit();
        if (res.ok) enqueued++;
      }
      await this.#kv.atomic().check(beat).delete(beat.key).commit();
    }
    if (enqueued > 0) log("warn", "jobs of a stopped process enqueued again", { jobs: enqueued });
    return enqueued;
  }
}
