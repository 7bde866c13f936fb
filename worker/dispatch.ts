import { JOB_BACKOFF_MS } from "../shared/sending/jobs.ts";
import { sendKeys } from "../shared/sending/keys.ts";
import { type DispatchState, maybeCompleteExecution } from "./complete.ts";
import type { WorkerContext } from "./context.ts";
import type { DeliverBatchJob, DispatchJob } from "./jobs.ts";
import { bookPromotionalBatches } from "./pace.ts";
import { nextPageIds } from "./recipients.ts";

/** Pages enqueued per KV commit. */
const PAGES_PER_COMMIT = 10;

/**
 * The `dispatch` job: pages the execution's recipients by keyset (`w.pageSize` at a time, ids only)
 * and enqueues one `deliver-batch` job per page. The cursor is saved in the same commit as the
 * jobs it enqueues, checked against the state read, so a redelivered or duplicate dispatch resumes
 * where the last commit left off and never enqueues a page twice. Recipients are never all in memory.
 */
export async function handleDispatch(w: WorkerContext, job: DispatchJob): Promise<void> {
  const { kv, sql } = w.deps;
  const key = sendKeys.dispatch(job.execution_id);
  let entry = await kv.get<DispatchState>(key);
  if (!entry.value) return;
  let state = entry.value;
  while (!state.done) {
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
    const op = kv.atomic().check(entry).set(key, next);
    const rate = w.deps.config.PUSH_PROMOTIONAL_RATE;
    const delays = state.paced && rate > 0 && pages.length > 0
      ? await bookPromotionalBatches(kv, op, state.team_id, pages.length, {
        contactsPerBatch: w.pageSize,
        rate,
        now: Date.now(),
      })
      : [];
    pages.forEach((page, i) => {
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
      op.enqueue(batch, {
        delay: delays[i],
        backoffSchedule: JOB_BACKOFF_MS,
        keysIfUndelivered: [sendKeys.undelivered(job.trigger_id, batch.id)],
      });
    });
    const res = await op.commit();
    if (!res.ok) {
      // Another dispatch of this execution moved on: it carries on from there. Else another
      // promotional fan-out of the team booked first: book these pages again, after it.
      const current = await kv.get<DispatchState>(key);
      if (current.versionstamp !== entry.versionstamp) return;
      continue;
    }
    entry = { key: entry.key, value: next, versionstamp: res.versionstamp };
    state = next;
  }
  await maybeCompleteExecution(w, job.trigger_id, job.execution_id);
}
