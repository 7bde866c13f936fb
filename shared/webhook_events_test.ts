import assert from "node:assert/strict";
import { countingDb, dbTest, testDeps, testTeam } from "./testing.ts";
import type { Deps } from "./deps.ts";
import { enqueueEvents, type EventType, invalidateEndpointCache, newEvent } from "./webhook_events.ts";

/** Enqueues one event of a team; the envelope, or undefined when no endpoint wants it. */
async function emitEvent(deps: Deps, teamId: string, type: EventType, data: Record<string, unknown>) {
  const [event] = await enqueueEvents(deps, teamId, [newEvent(type, data, deps.now())]);
  return event;
}

dbTest(
  "enqueueEvents(): concurrent events of a team share one endpoint query, until the cache is invalidated",
  async () => {
    const deps = await testDeps();
    const { team } = await testTeam(deps);
    const { db, statements } = countingDb(deps.sql);
    const counted = { ...deps, sql: db };
    const data = { message_id: "01JMSG", status: "delivered" };
    // No endpoint: nothing is emitted, and the empty list is what gets cached.
    const events = await Promise.all(
      Array.from({ length: 20 }, () => emitEvent(counted, team.id, "message.delivered", data)),
    );
    assert.deepEqual(events, Array(20).fill(undefined));
    assert.equal(statements(), 1);
    await emitEvent(counted, team.id, "message.delivered", data);
    assert.equal(statements(), 1, "answered from the cache");
    invalidateEndpointCache(team.id);
    await emitEvent(counted, team.id, "message.delivered", data);
    assert.equal(statements(), 2, "read again once invalidated");
  },
);
