import assert from "node:assert/strict";
import { sumCounter } from "./drain.ts";

Deno.test("sumCounter adds every label set of one counter and ignores others with the same prefix", () => {
  const text = [
    "# HELP message_deliveries_total Messages handed to a provider or dropped.",
    "# TYPE message_deliveries_total counter",
    'message_deliveries_total{channel="email",outcome="sent"} 120',
    'message_deliveries_total{channel="sms",outcome="failed"} 3',
    "message_deliveries_total_other 1000",
    'queue_jobs_total{type="send-group",outcome="ok"} 7',
  ].join("\n");
  assert.equal(sumCounter(text, "message_deliveries_total"), 123);
  assert.equal(sumCounter(text, "queue_jobs_total"), 7);
  assert.equal(sumCounter(text, "webhook_deliveries_total"), 0);
});
