import { type DispatchState, maybeCompleteExecution } from "./complete.ts";
import type { WorkerContext } from "./context.ts";
import type { DeliverBatchJob, DispatchJob } from "./jobs.ts";
import { bookPromotionalBatches } from "./pace.ts";
import { nextPageIds } from "./recipients.ts";

/** Pages enqueued per unit of work. */
const PAGES_PER_COMMIT = 10;

/**
 * The `dispatch` job: pages the execution's recipients by keyset (`w.pageSize` at a time, ids only)
 * and enqueues one `deliver-batch` job per page. The cursor is saved in the same unit of work as the
 * jobs it enqueues, by compare-and-set from the state read, so a redelivered or duplicate dispatch
 * resumes where the last unit left off and never enqueues a page twice. Recipients are never all in
 * memory.
 */
export async function handleDispatch(w: WorkerContext, job: DispatchJob): Promise<void> {
  const { sql, sendState, queue } = w.deps;
  let entry = await sendState.dispatch<DispatchState>(job.execution_id);
  while (entry && !entry.value.done) {
    const read = entry;
    const state = read.value;
    const pages: { after: string | null; until: string }[] = [];
    let after = state.after;
    let done = false;
    while (pages.length < PAGES_PER_COMMIT) {
      const ids = await nextPageIds(sql, state.team_id, state.filter, after, w.pageSize);
      if (ids.length > 0) {
        pages.push({ after, until: ids[ids.length - 1] });
        after = ids[ids.length - 1];
      }
      if (ids.length < w.pageSize) {
        done = true;
        break;
      }
    }
    const next: DispatchState = { ...state, after, batches: state.batches + pages.length, done };
    const rate = w.deps.config.PUSH_PROMOTIONAL_RATE;
    const committed = await w.deps.atomically(async (unit) => {
      await sendState.putDispatch(job.execution_id, next, read.version, unit);
      const delays = state.paced && rate > 0 && pages.length > 0
        ? await bookPromotionalBatches(sendState, unit, state.team_id, pages.length, {
          contactsPerBatch: w.pageSize,
          rate,
          now: Date.now(),
        })
        : [];
      for (const [i, page] of pages.entries()) {
        const batch: DeliverBatchJob = {
          type: "deliver-batch",
          id: crypto.randomUUID(),
          trigger_id: job.trigger_id,
          execution_id: job.execution_id,
          batch_no: state.batches + i,
          after: page.after,
          until: page.until,
          filter: state.filter,
          attempt: 0,
        };
        await queue.enqueue(batch, { delayMs: delays[i], forTrigger: job.trigger_id }, unit);
      }
    });
    // Lost: another dispatch of this execution moved on (it carries on from there), or another
    // promotional fan-out of the team booked first (these pages book again, after it).
    entry = await sendState.dispatch<DispatchState>(job.execution_id);
    if (!committed && entry?.version !== read.version) return;
  }
  await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
}
