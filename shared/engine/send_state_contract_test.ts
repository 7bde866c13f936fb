import assert from "node:assert/strict";
import { newUuidV7 } from "../sending/ids.ts";
import { finishExecutions, newTriggerRecord, pendingEntryOf } from "../sending/trigger_record.ts";
import { testSendSpec } from "../sending/testing.ts";
import { engineTest } from "./testing.ts";

/** A fan-out as the accept path makes it: its execution ids carry the trigger's time, as its id does. */
function randomSpec() {
  const now = Date.now();
  const spec = testSendSpec(crypto.randomUUID(), {
    trigger_id: newUuidV7(now),
    recipient_type: "tag",
    recipient: { type: "tag", tags: ["vip"] },
  });
  return { ...spec, executions: spec.executions.map((e) => ({ ...e, id: newUuidV7(now) })) };
}

const counts = (sent: number, failed = 0) => ({ total_contacts: sent + failed, sent, failed, filtered: 0 });

engineTest(
  "SendState.recordAccepted(): a send accepted in a unit reads back pending, by trigger and execution",
  async ({ hot, another }) => {
    const state = hot.sendState;
    const [a, b] = [randomSpec(), randomSpec()];
    assert.equal(await state.trigger(a.trigger_id), null);
    assert.equal(
      await hot.atomically((unit) => state.recordAccepted([pendingEntryOf(a), pendingEntryOf(b)], unit)),
      true,
    );
    const read = await another().sendState.trigger(a.trigger_id);
    assert.deepEqual(read?.record, newTriggerRecord(a));
    assert.equal(read?.pending, true);
    assert.equal(read?.givenUp, false);
    assert.equal(read?.counts.size, 0);
    assert.equal(await state.triggerOfExecution(b.executions[0].id), b.trigger_id);
    assert.equal(await state.triggerOfExecution(crypto.randomUUID()), null);
  },
);

engineTest("SendState.recordAccepted(): a unit that throws records nothing", async ({ hot }) => {
  const spec = randomSpec();
  await assert.rejects(
    hot.atomically(async (unit) => {
      await hot.sendState.recordAccepted([pendingEntryOf(spec)], unit);
      throw new Error("the accept failed");
    }),
    /the accept failed/,
  );
  assert.equal(await hot.sendState.trigger(spec.trigger_id), null);
});

engineTest("SendState.putTrigger(): the live record answers from then on, over the pending one", async ({ hot }) => {
  const spec = randomSpec();
  await hot.atomically((unit) => hot.sendState.recordAccepted([pendingEntryOf(spec)], unit));
  const live = { ...newTriggerRecord(spec), status: "processing" as const, started_at: Date.now() };
  assert.equal(await hot.atomically((unit) => hot.sendState.putTrigger(live, unit)), true);
  const read = await hot.sendState.trigger(spec.trigger_id);
  assert.deepEqual(read?.record, live);
  assert.equal(read?.pending, false);
});

engineTest(
  "SendState.updateTrigger(): concurrent changes from two processes all land, none lost",
  async ({ hot, another }) => {
    const spec = testSendSpec(crypto.randomUUID(), { trigger_id: newUuidV7(Date.now()) });
    const record = newTriggerRecord(spec);
    record.executions = Array.from({ length: 6 }, (_, i) => ({
      id: `e${i}`,
      channel: "email",
      status: "pending",
      counts: null,
      completed_at: null,
    }));
    await hot.sendState.putTrigger(record);
    const second = another().sendState;
    await Promise.all(record.executions.map((e, i) =>
      (i % 2 ? second : hot.sendState).updateTrigger(
        spec.trigger_id,
        (r) => finishExecutions(r, new Map([[e.id, counts(i)]]), Date.now()),
      )
    ));
    const done = (await hot.sendState.trigger(spec.trigger_id))!.record;
    assert.equal(done.status, "completed");
    assert.deepEqual(done.executions.map((e) => e.counts?.sent), [0, 1, 2, 3, 4, 5]);
    assert.equal(await hot.sendState.updateTrigger(crypto.randomUUID(), (r) => r), undefined);
    assert.deepEqual(await hot.sendState.updateTrigger(spec.trigger_id, () => undefined), done);
  },
);

engineTest(
  "SendState.countBatch(): a batch counts once, and the counts add up by execution",
  async ({ hot, another }) => {
    const state = hot.sendState;
    const triggerId = crypto.randomUUID();
    const batch = (executionId: string, batchNo: number) => ({ triggerId, executionId, batchNo });
    assert.equal(await state.batchCounted("x", 0), false);
    const results = await Promise.all([
      hot.atomically((unit) => state.countBatch(batch("x", 0), counts(3, 1), unit)),
      another().atomically((unit) => another().sendState.countBatch(batch("x", 1), counts(2), unit)),
      hot.atomically((unit) => state.countBatch(batch("y", 0), counts(0, 4), unit)),
    ]);
    assert.deepEqual(results, [true, true, true]);
    // Counted again (a redelivered batch): the unit loses and nothing is added.
    assert.equal(await hot.atomically((unit) => state.countBatch(batch("x", 0), counts(3, 1), unit)), false);
    assert.equal(await state.batchCounted("x", 0), true);
    assert.deepEqual(
      await state.counts(triggerId),
      new Map([
        ["x", { total_contacts: 6, sent: 5, failed: 1, filtered: 0, batches: 2 }],
        ["y", { total_contacts: 4, sent: 0, failed: 4, filtered: 0, batches: 1 }],
      ]),
    );
  },
);

engineTest(
  "SendState.trigger(): a running send shows its counts and a job given up; a final one neither",
  async ({ hot }) => {
    const state = hot.sendState;
    const spec = randomSpec();
    const executionId = spec.executions[0].id;
    await state.putTrigger({ ...newTriggerRecord(spec), status: "processing" });
    await hot.atomically((unit) =>
      state.countBatch({ triggerId: spec.trigger_id, executionId, batchNo: 0 }, counts(2), unit)
    );
    assert.equal(await state.givenUp(spec.trigger_id), false);
    await state.markGivenUp(spec.trigger_id, "job-1");
    const running = (await state.trigger(spec.trigger_id))!;
    assert.equal(running.givenUp, true);
    assert.deepEqual(running.counts.get(executionId), { ...counts(2), batches: 1 });
    const final = finishExecutions(running.record, new Map([[executionId, counts(2)]]), Date.now());
    await state.putTrigger(final);
    const finished = (await state.trigger(spec.trigger_id))!;
    assert.equal(finished.record.status, "completed");
    assert.equal(finished.givenUp, false);
    assert.equal(finished.counts.size, 0);
  },
);

engineTest("SendState.putDispatch(): the cursor moves only from the version read", async ({ hot, another }) => {
  const state = hot.sendState;
  const id = crypto.randomUUID();
  assert.equal(await state.dispatch(id), null);
  assert.equal(await hot.atomically((unit) => state.putDispatch(id, { after: null }, null, unit)), true);
  assert.equal(await hot.atomically((unit) => state.putDispatch(id, { after: "again" }, null, unit)), false);
  const first = (await state.dispatch<{ after: string | null }>(id))!;
  assert.deepEqual(first.value, { after: null });
  const racers = await Promise.all(
    [hot, another()].map((h, i) =>
      h.atomically((unit) => h.sendState.putDispatch(id, { after: `c${i}` }, first.version, unit))
    ),
  );
  assert.equal(racers.filter(Boolean).length, 1);
  assert.deepEqual((await state.dispatch(id))?.value, { after: `c${racers.indexOf(true)}` });
});

engineTest("SendState.putPushPace(): a team's booking moves only from the version read", async ({ hot }) => {
  const state = hot.sendState;
  const team = crypto.randomUUID();
  const until = Date.now() + 5_000;
  assert.equal(await state.pushPace(team), null);
  assert.equal(await hot.atomically((unit) => state.putPushPace(team, until, null, unit)), true);
  const read = (await state.pushPace(team))!;
  assert.equal(read.value, until);
  assert.equal(await hot.atomically((unit) => state.putPushPace(team, until + 1, null, unit)), false);
  assert.equal(await hot.atomically((unit) => state.putPushPace(team, until + 2, read.version, unit)), true);
  assert.equal(await hot.atomically((unit) => state.putPushPace(team, until + 3, read.version, unit)), false);
  assert.equal((await state.pushPace(team))?.value, until + 2);
});
