import assert from "node:assert/strict";
import { testConfig } from "../testing.ts";
import { KvCommitter } from "../kv.ts";
import { WindowCounter } from "./kv/window_counter.ts";
import { PostgresCounters } from "./postgres/counters.ts";
import { openHotState } from "./select.ts";

Deno.test("openHotState() builds the configured engine's ports", async () => {
  const kv = await Deno.openKv(":memory:");
  const parts = { kv, committer: new KvCommitter(kv), sql: {} as never };
  const onKv = openHotState(testConfig({ ENGINE: "kv" }), parts);
  const onPostgres = openHotState(testConfig({ ENGINE: "postgres" }), parts);
  try {
    assert.ok(onKv.counters instanceof WindowCounter);
    assert.ok(onPostgres.counters instanceof PostgresCounters);
  } finally {
    await onKv.close();
    await onPostgres.close();
    kv.close();
  }
});
