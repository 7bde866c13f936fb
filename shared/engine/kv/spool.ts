import { z } from "zod";
import { log } from "../../log.ts";
import { JOB_BACKOFF_MS } from "../../backoff.ts";
import { sendKeys } from "../../sending/keys.ts";
import type { UnitOfWork } from "../ports.ts";
import { kvUnitOf } from "./unit.ts";

/**
 * The burst spool. While this process accepts a burst (SEND_DEFER_RATE), the group jobs of each
 * accept commit are not enqueued: the same commit writes each one, ready to enqueue, to a spool page
 * filed under the second it was accepted in, and the first commit of each second enqueues one
 * `spool-drain` job for that second. The drain job waits out the burst in the worker (see
 * holdDuringBurst) and then runs the second's jobs itself, deleting each page once its job is done.
 * So a burst costs the queue one message a second rather than one per commit (each message is a
 * write on the KV database's one SQLite thread when it is dequeued, the thread the accept commits
 * wait on, and a long queue dequeues slower), and its sends go out as soon as it ends.
 *
 * Nothing is lost on a crash: a page and the drain job of its second are committed together with
 * the accepted items, or a drain job of the second was committed before. A page whose drain ran
 * before it landed (a commit slower than SPOOL_GRACE_MS) or whose drain job failed is moved by
 * the worker's sweep (sweepSpool), which enqueues it, once it is SPOOL_SWEEP_AGE_MS old. A page is
 * deleted or enqueued once: each such commit checks the page's versionstamp.
 */

/** Width (ms) of the slots spool pages are filed under (one drain job a slot). */
export const SPOOL_SLOT_MS = 1_000;
/** How long after its slot ends the drain job of a slot comes due: its commits have landed by then. */
export const SPOOL_GRACE_MS = 1_000;
/** Age (ms) after which the sweep moves a page its drain job did not. */
export const SPOOL_SWEEP_AGE_MS = 60_000;

/** A spool page: a group job ready to enqueue, and where the queue keeps it if it is never delivered. */
export interface SpoolPage {
  job: { type: string; id: string };
  undelivered: Deno.KvKey;
}

/** KV keys of the spool. */
export const spoolKeys = {
  page: (slot: number, jobId: string) => ["spool", slot, jobId] as const,
  slot: (slot: number) => ["spool", slot] as const,
  all: () => ["spool"] as const,
};

/** Writes group job `job` of trigger `triggerId` to the spool page of `slot`, in a unit of work on Deno KV. */
export function spoolJob(unit: UnitOfWork, slot: number, job: SpoolPage["job"], triggerId: string): void {
  const page: SpoolPage = { job, undelivered: sendKeys.undelivered(triggerId, job.id) };
  kvUnitOf(unit).add([], (op) => op.set(spoolKeys.page(slot, job.id), page));
}

/** The slot of a time (ms since the epoch). */
export function spoolSlot(ms: number): number {
  return Math.floor(ms / SPOOL_SLOT_MS);
}

/** Moves the spool pages of one slot into the queue. */
export const SpoolDrainJobSchema = z.object({
  type: z.literal("spool-drain"),
  id: z.string(),
  slot: z.number().int(),
});
export type SpoolDrainJob = z.infer<typeof SpoolDrainJobSchema>;

/** Spool pages this process wrote and has not moved (counted in the `queue_jobs_deferred` gauge). */
export const spooled = {
  pages: 0,
  add(n: number): void {
    this.pages += n;
  },
  moved(n: number): void {
    // Another process may move what this one wrote: never below 0.
    this.pages = Math.max(0, this.pages - n);
  },
};

/** Runs a spooled job in this process (the worker's handler); throws when the job failed. */
export type SpoolRunner = (job: SpoolPage["job"]) => Promise<void>;

/**
 * Deletes a page, or enqueues its job (after `delay` ms) and deletes it, unless another drain got to
 * it first.
 */
async function settle(
  kv: Deno.Kv,
  page: Deno.KvEntry<SpoolPage>,
  enqueue: { delay: number } | undefined,
): Promise<boolean> {
  const op = kv.atomic().check(page).delete(page.key);
  if (enqueue) {
    const { job, undelivered } = page.value;
    op.enqueue(job, { delay: enqueue.delay, backoffSchedule: JOB_BACKOFF_MS, keysIfUndelivered: [undelivered] });
  }
  const { ok } = await op.commit();
  if (ok) spooled.moved(1);
  return ok;
}

/** Pages one drain (or sweep) has in hand at once: bounds its memory; about one delivery pass of sends. */
const PAGES_AT_ONCE = 64;

/**
 * Takes each listed page off the spool: with `run`, its job runs here and the page is deleted once it
 * succeeded (a job that fails goes to the queue, for the queue's retries and undelivered key);
 * without, its job is enqueued. At most PAGES_AT_ONCE pages at a time (the list is read as they
 * finish). Answers how many pages this call took.
 */
async function take(kv: Deno.Kv, pages: Deno.KvListIterator<SpoolPage>, run?: SpoolRunner): Promise<number> {
  let taken = 0;
  const inHand = new Set<Promise<void>>();
  // A job that failed here is tried again from the queue, as its first retry would be.
  const retry = { delay: JOB_BACKOFF_MS[0] };
  for await (const page of pages) {
    const settled = run
      ? run(page.value.job).then(() => settle(kv, page, undefined), () => settle(kv, page, retry))
      : settle(kv, page, { delay: 0 });
    const done: Promise<void> = settled.then((ok) => {
      if (ok) taken++;
    }).finally(() => inHand.delete(done));
    inHand.add(done);
    if (inHand.size >= PAGES_AT_ONCE) await Promise.race(inHand);
  }
  await Promise.all(inHand);
  return taken;
}

/**
 * The `spool-drain` job: takes the pages of `slot` off the spool (see take). Run here, a burst's jobs
 * cost the queue nothing more, and they merge into large delivery passes as they would from the queue.
 * A drain cut off by a crash is delivered again and takes what is left; a job run twice sends nothing
 * twice (deliveries are keyed by trigger, channel and recipient).
 */
export async function drainSpool(kv: Deno.Kv, slot: number, run?: SpoolRunner): Promise<number> {
  return await take(kv, kv.list<SpoolPage>({ prefix: spoolKeys.slot(slot) }), run);
}

/** Moves every page older than SPOOL_SWEEP_AGE_MS into the queue; answers how many moved. */
export async function sweepSpool(kv: Deno.Kv, now: number): Promise<number> {
  const before = spoolSlot(now - SPOOL_SWEEP_AGE_MS);
  const moved = await take(kv, kv.list<SpoolPage>({ start: spoolKeys.all(), end: spoolKeys.slot(before) }));
  if (moved > 0) log("warn", "spool pages moved by the sweep", { pages: moved });
  return moved;
}
