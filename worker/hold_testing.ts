/** The harness of the quiet-hours tests: a clock the test moves, and quiet hours around its now. */
import assert from "node:assert/strict";
import type { Deps } from "../shared/deps.ts";
import { PgBossQueue } from "../shared/engine/pg_boss_queue.ts";
import type { EnqueueOptions } from "../shared/engine/queue.ts";
import { testQueueOptions } from "../shared/engine/pg_boss_testing.ts";
import { jsonRequest, onKv } from "../shared/testing.ts";
import type { SendingFixture } from "./testing.ts";

/**
 * A clock the test moves, over a queue of the test's own (on the suite's engine) whose delayed jobs
 * wait in the test until the clock passes their time; then they go to the queue, to run at once.
 * Held messages come back hours later: the test travels there instead of waiting.
 */
export class TimeTravel {
  #offset = 0;
  #waiting: { job: { type: string }; options: EnqueueOptions; due: number }[] = [];
  #queue?: Deps["queue"];
  #close: () => Promise<void> | void = () => {};

  readonly now = () => Date.now() + this.#offset;

  /** `base` on this clock, with its own queue (its worker reads this clock). */
  async around(base: Deps): Promise<Deps> {
    let deps: Deps;
    if (base.config.ENGINE === "postgres") {
      const schema = `pgboss_quiet_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      const queue = await PgBossQueue.start<{ type: string }>(base.sql, testQueueOptions(schema, "jobs"));
      deps = { ...base, queue };
      this.#close = () => queue.stop();
    } else {
      const kv = await Deno.openKv(":memory:");
      deps = onKv(base, kv);
      this.#close = () => kv.close();
    }
    const queue = deps.queue;
    this.#queue = queue;
    return {
      ...deps,
      now: this.now,
      queue: {
        enqueue: (job, options = {}, unit) => {
          if (!options.delayMs) return queue.enqueue(job, options, unit);
          this.#waiting.push({ job, options, due: this.now() + options.delayMs });
          return Promise.resolve();
        },
        listen: (handler) => queue.listen(handler),
        stop: () => queue.stop(),
      },
    };
  }

  /** The jobs waiting for the clock. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /**
   * Moves the clock `ms` on and enqueues the delayed jobs now due (a job delayed until an instant
   * is due a moment after it: its delay was counted from a clock read before the enqueue).
   */
  async travel(ms: number): Promise<void> {
    this.#offset += ms;
    const due = this.#waiting.filter((w) => w.due <= this.now());
    this.#waiting = this.#waiting.filter((w) => w.due > this.now());
    for (const w of due) await this.#queue!.enqueue(w.job, { ...w.options, delayMs: 0 });
  }

  async close(): Promise<void> {
    await this.#close();
  }
}

/** `at` on the wall clock of `zone`, "HH:MM". */
export function localTime(at: number, zone: string): string {
  return new Intl.DateTimeFormat("en-GB", { timeZone: zone, hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
    .format(at);
}

export const HOUR = 3_600_000;

/**
 * Quiet hours from an hour ago to an hour from now on Tokyo's clock (New York's clock is 13 or 14
 * hours behind: outside them), for team zone `timezone`; answers when they end.
 */
export async function quietAroundNow(f: SendingFixture, clock: TimeTravel, timezone: string): Promise<number> {
  const end = Math.floor((clock.now() + HOUR) / 60_000) * 60_000;
  const quiet_hours = {
    start: localTime(clock.now() - HOUR, "Asia/Tokyo"),
    end: localTime(end, "Asia/Tokyo"),
    timezone,
  };
  const res = await f.app.request(
    `/admin/v1/teams/${f.team.id}/settings`,
    jsonRequest("PATCH", { quiet_hours }, { Authorization: `Bearer ${f.deps.config.ADMIN_TOKEN}` }),
  );
  assert.equal(res.status, 200, await res.text());
  return end;
}

/** Polls `read` until `done` holds of its answer (the worker runs beside the test). */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 60_000;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 25));
    last = await read();
  }
  return last;
}
