import assert from "node:assert/strict";
import { serialize } from "node:v8";
import { KvCommitter } from "../kv.ts";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { Acceptor, sendAcceptor, sizeOf } from "./acceptor.ts";
import type { SendSpec } from "./spec.ts";
import { testSendSpec } from "./testing.ts";
import type { SendGroupJob } from "./jobs.ts";
import { AcceptPressure } from "./pressure.ts";
import { drainSpool, type SpoolDrainJob, spooled, spoolKeys, type SpoolPage, spoolSlot } from "../engine/kv/spool.ts";
import { newTriggerRecord, pendingEntryOf } from "./trigger_record.ts";
import { findPending, KvSendState } from "../engine/kv/send_state.ts";
import { KvQueue } from "../engine/kv/queue.ts";
import type { Deps } from "../deps.ts";
import { uuidV7Time } from "./ids.ts";
import { pendingSlot, sendKeys } from "./keys.ts";

function spec(teamId: string, extra: Partial<SendSpec> = {}): SendSpec {
  return testSendSpec(teamId, { variables: { note: "x".repeat(1_000) }, ...extra });
}

Deno.test("sizeOf() is never under the V8 serialisation of a value (what a KV value or queue message takes)", () => {
  const values: unknown[] = [
    testSendSpec("team-1"),
    testSendSpec("team-1", { variables: { note: "x".repeat(5_000), list: [1, 2, 3], nested: { a: null } } }),
    testSendSpec("team-1", { variables: { name: "Zoë", body: "é".repeat(3_000), emoji: "📨".repeat(500) } }),
    { empty: {}, list: [], flag: true, n: 1.5, big: 2 ** 53, text: "" },
    ["a", "b", { c: "d" }],
    { ["ключ".repeat(50)]: "é".repeat(10), ["名前"]: "名".repeat(200) },
  ];
  for (const value of values) assert.ok(sizeOf(value) >= serialize(value).length, JSON.stringify(value).slice(0, 80));
});

/**
 * A KV of its own whose queue messages are collected, a committer counting its commits, and `deps`
 * whose engine ports are on that KV and committer.
 */
async function harness(shared: Deps) {
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
  const engine = { sendState: new KvSendState(kv, counting), queue: new KvQueue<{ type: string }>(kv, counting) };
  const deps: Deps = { ...shared, kv, committer: counting, ...engine };
  return { kv, messages, committer: counting, engine, deps, commits: () => commits };
}

async function until(check: () => boolean) {
  for (let i = 0; i < 300 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
}

dbTest("Acceptor commits the sends of concurrent callers together, pending records in a few pages", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const h = await harness(deps);
  const acceptor = sendAcceptor(h.deps);
  const specs = Array.from({ length: 300 }, () => spec(team.id));
  await Promise.all(specs.map((s) => acceptor.accept(s, Date.now())));
  assert.ok(h.commits() <= 3, `commits: ${h.commits()}`);
  for (const s of specs) {
    const record = await findPending(h.kv, s.trigger_id);
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

dbTest(
  "pending pages keep short entries; a page of whole records, as written before, reads back the same",
  async () => {
    const deps = await testDeps();
    const { team } = await testTeam(deps);
    const h = await harness(deps);
    const s = spec(team.id);
    await sendAcceptor(h.deps).accept(s, Date.now());
    const [page] = await Array.fromAsync(h.kv.list<Record<string, unknown>[]>({ prefix: ["send_pending"] }));
    assert.deepEqual(Object.keys(page.value[0]).sort(), [
      "created_at",
      "executions",
      "flow_type",
      "id",
      "job_id",
      "recipient_type",
      "scheduled_for",
      "team_id",
      "trigger_type",
    ]);
    const record = await findPending(h.kv, s.trigger_id);
    assert.deepEqual(record, newTriggerRecord(s));
    // A whole record in a page (the form before entries) is found and read as it is.
    const old = spec(team.id);
    // Filed by the id's own time, as the acceptor files it (a 10 ms slot may end between the two).
    const slot = pendingSlot(uuidV7Time(old.trigger_id)!);
    await h.kv.set(sendKeys.pendingPage(slot, old.trigger_id), [newTriggerRecord(old)]);
    assert.deepEqual(await findPending(h.kv, old.trigger_id), newTriggerRecord(old));
    h.kv.close();
  },
);

dbTest("Acceptor records a scheduled or oversized send in Postgres and enqueues it by id", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const h = await harness(deps);
  const acceptor = sendAcceptor(h.deps);
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
  "Acceptor spools the group jobs of a burst, with one drain job a slot, and the drain enqueues them",
  async () => {
    const deps = await testDeps();
    const { team } = await testTeam(deps);
    const h = await harness(deps);
    const pressure = new AcceptPressure();
    const acceptor = new Acceptor<SendSpec>({
      pending: pendingEntryOf,
      groupJob: (id, sends) => ({ type: "send-group", id, sends, attempt: 0 }),
      acceptStored: () => Promise.reject(new Error("not stored")),
      deferral: { pressure, busyRate: 10, maxDelayMs: 60_000 },
    }, h.engine);
    const quiet = spec(team.id);
    await acceptor.accept(quiet, Date.now());
    await until(() => h.messages.length === 1);
    assert.equal(h.messages[0].type, "send-group", "outside a burst: enqueued at once");
    const pagesBefore = spooled.pages;

    // A burst: far over 10 sends a second. Accepted in one spool slot (retried until they fit in one).
    let slot = 0;
    let burst: SendSpec[] = [];
    for (let tries = 0; tries < 5; tries++) {
      pressure.note(Date.now(), 1_000);
      slot = spoolSlot(Date.now());
      burst = Array.from({ length: 20 }, () => spec(team.id));
      const commitsBefore = h.commits();
      await Promise.all(burst.map((s) => acceptor.accept(s, Date.now())));
      if (spoolSlot(Date.now()) === slot && h.commits() > commitsBefore) break;
    }
    const pages = await Array.fromAsync(h.kv.list<SpoolPage>({ prefix: spoolKeys.slot(slot) }));
    const spooledSends = pages.flatMap((p) => (p.value.job as SendGroupJob).sends.map((s) => s.trigger_id));
    for (const s of burst) assert.ok(spooledSends.includes(s.trigger_id), "every send of the burst is spooled");
    assert.ok(spooled.pages > pagesBefore, "counted in the gauge");
    for (const s of burst) assert.equal((await findPending(h.kv, s.trigger_id))?.status, "pending");
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(h.messages.filter((m) => m.type === "send-group").length, 1, "no group job in the queue yet");

    // The slot's one drain job comes due a second after the slot; moving the pages enqueues their jobs.
    const drainsOf = () =>
      (h.messages.filter((m) => m.type === "spool-drain") as unknown as SpoolDrainJob[]).filter((d) => d.slot === slot);
    await until(() => drainsOf().length > 0);
    assert.equal(drainsOf().length, 1, "one drain job for the slot");
    assert.equal(await drainSpool(h.kv, slot), pages.length);
    assert.equal(await drainSpool(h.kv, slot), 0, "moved once");
    await until(() => h.messages.reduce((n, m) => n + (m.sends?.length ?? 0), 0) >= 21);
    const delivered = h.messages.flatMap((m) => m.sends?.map((s) => s.trigger_id) ?? []);
    for (const s of [quiet, ...burst]) assert.equal(delivered.filter((id) => id === s.trigger_id).length, 1);
    assert.deepEqual(await Array.fromAsync(h.kv.list({ prefix: spoolKeys.slot(slot) })), []);
    h.kv.close();
  },
);
