import assert from "node:assert/strict";
import type { Deps } from "./deps.ts";
import { EVENT_SWEEP_AGE_MS, relayEvents, stageEvents, sweepEventOutbox, type TeamEvent } from "./event_outbox.ts";
import { dbTest, onKv, testDeps, testTeam } from "./testing.ts";
import { invalidateEndpointCache, listenersOf, type WebhookDeliverJob } from "./webhook_events.ts";

/**
 * Deps whose KV is a private in-memory one, and the webhook jobs enqueued to it (a listener
 * collects them: no worker runs them), on a clock the test moves.
 */
async function withQueue() {
  const base = await testDeps();
  const kv = await Deno.openKv(":memory:");
  const jobs: WebhookDeliverJob[] = [];
  kv.listenQueue((job) => {
    jobs.push(job as WebhookDeliverJob);
  });
  const clock = { now: Date.now() };
  const deps: Deps = { ...onKv(base, kv), now: () => clock.now };
  const { team } = await testTeam(deps);
  const endpoint = async (events: string[] | null) => {
    const [row] = await deps.sql<{ id: string }[]>`
      insert into webhook_endpoints (team_id, url, secret, events)
      values (${team.id}, 'https://hooks.example.com/x', 'whsec_test', ${events}) returning id`;
    invalidateEndpointCache(team.id);
    return row.id;
  };
  const outbox = async () => [
    ...await deps.sql<{ id: string; type: string }[]>`
      select id, type from webhook_event_outbox where team_id = ${team.id} order by created_at, id`,
  ];
  /** The event ids of the jobs the queue delivered, once `count` of them have come. */
  const relayed = async (count: number) => {
    for (let i = 0; i < 400 && jobs.flatMap((j) => j.deliveries).length < count; i++) {
      await new Promise((r) => setTimeout(r, 10));
    }
    return jobs.flatMap((j) => j.deliveries.map((d) => d.event.id)).sort();
  };
  return { deps, kv, clock, team, endpoint, outbox, relayed, jobs };
}

function sent(teamId: string, n: number): TeamEvent {
  return { team_id: teamId, type: "message.sent", data: { message_id: `m${n}`, status: "sent" } };
}

dbTest(
  "stageEvents() writes only the events an endpoint wants, and they go with a rolled-back transaction",
  async () => {
    const q = await withQueue();
    try {
      const none = await listenersOf(q.deps, [q.team.id]);
      const staged = await q.deps.sql.begin((tx) => stageEvents(tx, none, [sent(q.team.id, 1)], q.clock.now));
      assert.deepEqual(staged, [], "no endpoint: nothing staged");
      await q.endpoint(["trigger.completed"]);
      const listeners = await listenersOf(q.deps, [q.team.id]);
      const completed: TeamEvent = { team_id: q.team.id, type: "trigger.completed", data: { trigger_id: "t" } };
      await assert.rejects(
        q.deps.sql.begin(async (tx) => {
          const events = await stageEvents(tx, listeners, [sent(q.team.id, 2), completed], q.clock.now);
          assert.deepEqual(events.map((s) => s.event.type), ["trigger.completed"]);
          throw new Error("the change fails");
        }),
        /the change fails/,
      );
      assert.deepEqual(await q.outbox(), []);
    } finally {
      q.kv.close();
    }
  },
);

dbTest("relayEvents() hands staged events to the queue and clears them from the outbox", async () => {
  const q = await withQueue();
  try {
    await q.endpoint(null);
    const listeners = await listenersOf(q.deps, [q.team.id]);
    const staged = await q.deps.sql.begin((tx) =>
      stageEvents(tx, listeners, [sent(q.team.id, 1), sent(q.team.id, 2)], q.clock.now)
    );
    assert.deepEqual((await q.outbox()).map((r) => r.id).sort(), staged.map((s) => s.event.id).sort());
    assert.equal(await relayEvents(q.deps, staged), 2);
    assert.deepEqual(await q.relayed(2), staged.map((s) => s.event.id).sort());
    assert.deepEqual(await q.outbox(), []);
  } finally {
    q.kv.close();
  }
});

dbTest("the sweep relays the events a stopped process left, the same envelopes, once they are old enough", async () => {
  const q = await withQueue();
  try {
    await q.endpoint(["message.sent"]);
    const listeners = await listenersOf(q.deps, [q.team.id]);
    const staged = await q.deps.sql.begin((tx) =>
      stageEvents(tx, listeners, [sent(q.team.id, 1), sent(q.team.id, 2), sent(q.team.id, 3)], q.clock.now)
    );
    // The process stops here, before it relays them.
    q.clock.now += EVENT_SWEEP_AGE_MS - 1;
    assert.equal(await sweepEventOutbox(q.deps), 0, "its own process may still relay them");
    q.clock.now += 1;
    assert.equal(await sweepEventOutbox(q.deps), 3);
    await q.relayed(3);
    const delivered = q.jobs.flatMap((j) => j.deliveries.map((d) => d.event));
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
    assert.deepEqual(delivered.sort(byId), staged.map((s) => s.event).sort(byId));
    assert.deepEqual(await q.outbox(), []);
    assert.equal(await sweepEventOutbox(q.deps), 0, "relayed once");
  } finally {
    q.kv.close();
  }
});

dbTest("an event whose queue commit fails stays in the outbox for the sweep", async () => {
  const q = await withQueue();
  try {
    await q.endpoint(null);
    const listeners = await listenersOf(q.deps, [q.team.id]);
    const staged = await q.deps.sql.begin((tx) => stageEvents(tx, listeners, [sent(q.team.id, 1)], q.clock.now));
    const refusing: Deps = {
      ...q.deps,
      queue: { ...q.deps.queue, enqueue: () => Promise.reject(new Error("The queue is gone")) },
    };
    assert.equal(await relayEvents(refusing, staged), 0);
    assert.equal((await q.outbox()).length, 1);
    q.clock.now += EVENT_SWEEP_AGE_MS;
    assert.equal(await sweepEventOutbox(q.deps), 1);
    assert.deepEqual(await q.relayed(1), [staged[0].event.id]);
  } finally {
    q.kv.close();
  }
});

dbTest("relayEvents() hands over a pass of 2,000 events in commits KV accepts (each under 800 KiB)", async () => {
  const q = await withQueue();
  try {
    await q.endpoint(null);
    const listeners = await listenersOf(q.deps, [q.team.id]);
    // As a delivery page of 2,000 messages reports them (with the ids of the message, its trigger and
    // execution, its address and its provider's id): about 1 MB of events in all, over KV's 800 KiB.
    const events = Array.from({ length: 2_000 }, (_, i) => ({
      ...sent(q.team.id, i),
      data: {
        message_id: `01KMSG${String(i).padStart(20, "0")}`,
        trigger_id: crypto.randomUUID(),
        execution_id: crypto.randomUUID(),
        channel: "email",
        to: `someone.with.a.long.address.${i}@example.com`,
        status: "sent",
        provider_message_id: `outbox_${crypto.randomUUID()}${crypto.randomUUID()}`,
      },
    }));
    const staged = await q.deps.sql.begin((tx) => stageEvents(tx, listeners, events, q.clock.now));
    assert.equal(await relayEvents(q.deps, staged), 2_000);
    assert.equal(new Set(await q.relayed(2_000)).size, 2_000);
    assert.deepEqual(await q.outbox(), []);
  } finally {
    q.kv.close();
  }
});
