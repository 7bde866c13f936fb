/**
 * Burst deferral, decided with figures: the accept rate of direct SMS and the time from each 201 to
 * its message's provider call (`sent_at`), with SEND_DEFER_RATE as given, in one process (the API
 * and the worker on the test runtime). Open loop at `offered` sends a second, or closed loop with
 * `concurrency` callers when `offered` is 0.
 *
 *   deno run -A bench/deferral.ts <SEND_DEFER_RATE> <seconds> <concurrency> [offered]
 *
 * Alternate the runs (e.g. 200 then 0, twice) when other work shares the machine.
 */
import { createService } from "../main.ts";
import { toMicros } from "../shared/money.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { jsonRequest, testDeps, testTeam } from "../shared/testing.ts";
import { topUp } from "../shared/wallet.ts";
import { startWorker } from "../worker/queue.ts";

const [deferRate, seconds, concurrency, offered = 0] = Deno.args.map(Number);
const deps = await testDeps({
  SEND_DEFER_RATE: deferRate,
  RATE_LIMIT_ENTERPRISE: 1e9,
  TRIGGER_RATE_LIMIT_ENTERPRISE: 1e9,
});
startWorker(deps);
const app = createService(deps);
const { team, keys } = await testTeam(deps, "enterprise");
await topUp(deps.sql, team.id, toMicros(100_000));
await upsertTemplate(deps.sql, team.id, "sms", "hi", { body: "Hi" });

/** When each accepted trigger was answered 201 (ms since the epoch). */
const accepted = new Map<string, number>();
let seq = 0;

async function sendOne(): Promise<void> {
  const phone = `+1415555${String(seq++ % 10_000).padStart(4, "0")}`;
  const res = await app.request(
    "/api/v1/sms/send",
    jsonRequest("POST", { template_key: "hi", recipient_type: "direct_sms", direct_phone: phone }, {
      "X-API-Key": keys.live,
    }),
  );
  const body = await res.json();
  if (res.status === 201) accepted.set(body.trigger_id, Date.now());
}

const started = Date.now();
const end = started + seconds * 1000;
if (offered > 0) {
  const inFlight: Promise<void>[] = [];
  let launched = 0;
  while (Date.now() < end) {
    const due = Math.floor(((Date.now() - started) / 1000) * offered);
    for (; launched < due; launched++) inFlight.push(sendOne());
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(inFlight);
} else {
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) await sendOne();
  }));
}
const acceptSeconds = (Date.now() - started) / 1000;

let delivered: { trigger_id: string; at: Date }[] = [];
for (let i = 0; i < 1_200 && delivered.length < accepted.size; i++) {
  await new Promise((r) => setTimeout(r, 100));
  delivered = await deps.sql`
    select trigger_id::text, coalesce(sent_at, created_at) as at from messages where team_id = ${team.id}`;
}
const latencies = delivered.map((d) => d.at.getTime() - accepted.get(d.trigger_id)!).sort((a, b) => a - b);
const percentile = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))];
console.log(JSON.stringify({
  SEND_DEFER_RATE: deferRate,
  accepted: accepted.size,
  accepted_per_s: Math.round(accepted.size / acceptSeconds),
  delivered: latencies.length,
  p50_ms: percentile(0.5),
  p99_ms: percentile(0.99),
  max_ms: latencies[latencies.length - 1],
  load: Deno.loadavg()[0],
}));
Deno.exit(0);
