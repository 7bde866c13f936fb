import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { HOUR, quietAroundNow, TimeTravel, until } from "../hold_testing.ts";
import { NO_LONGER_RECIPIENT } from "../hold.ts";
import { sendingFixture } from "../testing.ts";

dbTest(
  "a promotional workflow step is held by quiet hours, then sent, or filtered and refunded if the contact left",
  async () => {
    const clock = new TimeTravel();
    const f = await sendingFixture("pro", {}, (deps) => clock.around(deps));
    try {
      await f.fund(1);
      const funded = await f.balance();
      await f.template("sms", "promo", { body: "Sale" });
      const end = await quietAroundNow(f, clock, "Asia/Tokyo");
      const aki = await f.contact({ tags: ["vip"], phone: "+819012345678" });
      await f.contact({ tags: ["vip"], phone: "+819012345679" });
      const kei = await f.contact({ tags: ["vip"], phone: "+819012345670" });
      const created = await f.post("/api/v1/workflows", {
        name: `promo ${crypto.randomUUID().slice(0, 6)}`,
        event_type: "sale",
        steps: [{
          step_order: 1,
          channel_type: "sms",
          configuration: { template_id: "promo", delay_minutes: 0, category: "promotional" },
        }],
      });
      assert.equal(created.status, 201, await created.clone().text());
      const workflow = await created.json();
      const started = await f.send("/api/v1/workflows/trigger", {
        workflow_id: workflow.id,
        recipient_type: "tag",
        tags: ["vip"],
      });
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const triggerId = started.body.trigger_id;

      // Both messages are recorded and charged, held to the end of the quiet hours; nothing is sent yet.
      const messages = () =>
        f.deps.sql<
          { to_address: string | null; status: string; error: string | null; cost_micros: number; held: Date }[]
        >`
          select to_address, status, error, cost_micros::int, held_until as held from messages
          where trigger_id = ${triggerId} order by to_address nulls last`;
      const held = await until(messages, (rows) => rows.length === 3, "the step messages recorded");
      assert.deepEqual(held.map((m) => [m.status, m.held?.getTime()]), Array(3).fill(["pending", end]));
      await until(() => Promise.resolve(clock.waiting), (n) => n === 1, "the held step's job waits");
      assert.equal((await f.outbox(triggerId)).length, 0);
      const charged = held.reduce((sum, m) => sum + m.cost_micros, 0);
      assert.ok(charged > 0);

      await f.deps.sql`update contacts set is_unsubscribed = true where id = ${aki.id}`;
      const deleted = await f.app.request(`/api/v1/contacts/${kei.id}`, {
        method: "DELETE",
        headers: { "X-API-Key": f.keys.live },
      });
      assert.equal(deleted.status, 200, await deleted.text());
      await clock.travel(2 * HOUR);
      const trigger = await f.waitForTrigger(triggerId);
      assert.equal(trigger.status, "completed");
      const after = await messages();
      assert.deepEqual(after.map((m) => [m.to_address, m.status, m.error, m.cost_micros > 0]), [
        ["+819012345678", "filtered", "Contact is unsubscribed", false],
        ["+819012345679", "sent", null, true],
        [null, "filtered", NO_LONGER_RECIPIENT, false],
      ]);
      assert.deepEqual((await f.outbox(triggerId)).map((m) => m.to_address), ["+819012345679"]);
      // The unsubscribed and the deleted contacts' messages were refunded: only the one sent is paid for.
      assert.equal(Math.round((funded - await f.balance()) * 1e6), after[1].cost_micros);
      const history = await (await f.get(`/api/v1/workflows/${workflow.id}/executions`)).json();
      assert.deepEqual(history.executions.map((e: { status: string }) => e.status).sort(), [
        "COMPLETED",
        "COMPLETED",
        "FAILED",
      ]);
    } finally {
      await clock.close();
    }
  },
);
