import assert from "node:assert/strict";
import { testSendSpec } from "../shared/sending/testing.ts";
import { dbTest } from "../shared/testing.ts";
import { startWorker } from "./queue.ts";
import { handleSendGroup } from "./sends.ts";
import { sendingFixture } from "./testing.ts";

/** Random [A-Za-z0-9] characters: Postgres cannot compress them under its index row limit. */
function randomToken(length: number): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(crypto.getRandomValues(new Uint8Array(length)), (b) => chars[b % chars.length]).join("");
}

dbTest("a send the database refuses does not hold back the others accepted with it", async () => {
  const f = await sendingFixture();
  const other = await sendingFixture();
  await f.template("sms", "ok", { body: "fine" });
  const good = testSendSpec(f.team.id, {}, "ok");
  // Another team's push to a token too long for the messages index: its INSERT fails, every time.
  const bad = testSendSpec(other.team.id, {
    trigger_type: "push",
    recipient_type: "direct_push",
    recipient: { type: "direct", address: randomToken(4_000), platform: "android" },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "push", title: "T", body: "B", category: "transactional" },
    }],
  });
  const job = { type: "send-group" as const, id: crypto.randomUUID(), sends: [bad, good], attempt: 0 };
  // The group completes (the bad send goes back to the queue alone) rather than failing whole.
  await handleSendGroup(startWorker(f.deps).context, job);
  assert.deepEqual((await f.outbox(good.trigger_id)).map((m) => m.body), ["fine"]);
  assert.equal((await f.waitForTrigger(good.trigger_id)).status, "completed");
  assert.deepEqual(await other.outbox(bad.trigger_id), []);
});
