import assert from "node:assert/strict";
import { KvCommitter } from "../kv.ts";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { Acceptor, sendAcceptor } from "./acceptor.ts";
import type { SendSpec } from "./spec.ts";
import { testSendSpec } from "./testing.ts";
import { AcceptPressure, deferredJobs } from "./pressure.ts";
import { findPendingRecord, newTriggerRecord } from "./trigger_record.ts";

function spec(teamId: string, extra: Partial<SendSpec> = {}): SendSpec {
  return testSendSpec(teamId, { variables: { note: "x".repeat(1_000) }, ...extra });
}

/** A KV of its own whose queue messages are collected, and a committer counting its commits. */
async function harness() {
  const kv = await Deno.openKv(":memory:");
  const messages: { type: string; id: string; sends?: SendSpec[]; trigger_id?: string }[] = [];
  kv.listenQueue((m) => {
    messages.push(m as never);
  });
  const committer = new KvCommitter(kv);
  let commits = 0;
  const counting = {
    commit(build: (op: Deno.AtomicOperation) => void, weight?: number) {
      commits++;
      return committer.commit(build, weight);
    },
  } as unknown as KvCommitter;
  return { kv, messages, committer: counting, commits: () => commits };
}

async function until(check: () => boolean) {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

dbTest("Acceptor commits the sends of concurrent callers together, pending records in a few pages", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const h = await harness();
  const acceptor = sendAcceptor(h.committer, deps.sql);
  const specs = Array.from({ length: 300 }, () => spec(team.id));
  await Promise.all(specs.map((s) => acceptor.accept(s, Date.now())));
  assert.ok(h.commits() <= 3, `commits: ${h.commits()}`);
  for (const s of specs) {
    const record = await findPendingRecord(h.kv, s.trigger_id);
    assert.equal(record?.status, "pending");
    assert.equal(record?.team_id, team.id);
  }
  // A few pages hold the pending records: not one key per send.
  let pages = 0;
  for await (const _ of h.kv.list({ prefix: ["send_pending"] })) pages++;
  assert.ok(pages < 30, `pages: ${pages}`);
  await until(() => h.messages.reduce((n, m) => n + (m.sends?.length ?? 0), 0) === 300);
  const carried = h.messages.flatMap((m) => m.sends ?? []).map((s) => s.trigger_id).sort();
  assert.deepEqual(carried, specs.map((s) => s.trigger_id).sort());
  assert.ok(h.messages.length > 1 && h.messages.length < 20, `messages: ${h.messages.length}`);
  for (const m of h.messages) assert.ok(new TextEncoder().encode(JSON.stringify(m)).length < 65_536);
  h.kv.close();
});

dbTest("Acceptor records a scheduled or oversized send in Postgres and enqueues it by id", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const h = await harness();
  const acceptor = sendAcceptor(h.committer, deps.sql);
  const big = spec(team.id, { variables: { blob: "y".repeat(70_000) } });
  await acceptor.accept(big, Date.now());
  const scheduled = spec(team.id, { scheduled_for: Date.now() + 3_600_000 });
  await acceptor.accept(scheduled, Date.now());
  const rows = await deps.sql`select id, status from triggers where id in ${
    deps.sql([big.trigger_id, scheduled.trigger_id])
  }`;
  assert.equal(rows.length, 2);
  assert.ok(rows.every((r) => r.status === "pending"));
  await until(() => h.messages.length === 1);
  assert.deepEqual(h.messages, [{ type: "send-stored", id: h.messages[0].id, trigger_id: big.trigger_id }]);
  h.kv.close();
});

dbTest(
  "Acceptor defers the group jobs of a burst in the queue (not handed to the worker at once) and counts them",
  async () => {
    const deps = await testDeps();
    const { team } = await testTeam(deps);
    const h = await harness();
    const pressure = new AcceptPressure();
    const acceptor = new Acceptor<SendSpec>(h.committer, {
      record: newTriggerRecord,
      groupJob: (id, sends) => ({ type: "send-group", id, sends, attempt: 0 }),
      acceptStored: () => Promise.reject(new Error("not stored")),
      deferral: { pressure, busyRate: 10, maxDelayMs: 60_000 },
    });
    const quiet = spec(team.id);
    await acceptor.accept(quiet, Date.now());
    await until(() => h.messages.length === 1);
    const before = deferredJobs.waiting(Date.now());
    // A burst: far over 10 sends a second (the 20 sends below alone are ≈ 66 a second over 300 ms).
    pressure.note(Date.now(), 1_000);
    const burst = Array.from({ length: 20 }, () => spec(team.id));
    await Promise.all(burst.map((s) => acceptor.accept(s, Date.now())));
    assert.ok(deferredJobs.waiting(Date.now()) > before, "counted as deferred");
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(h.messages.length, 1, "the burst's jobs wait in the queue");
    for (const s of burst) assert.equal((await findPendingRecord(h.kv, s.trigger_id))?.status, "pending");
    await until(() => h.messages.reduce((n, m) => n + (m.sends?.length ?? 0), 0) === 21);
    h.kv.close();
  },
);
