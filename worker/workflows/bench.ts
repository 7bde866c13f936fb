/**
 * Workflow throughput: `deno run -A worker/workflows/bench.ts [contacts=10000] [second channel=email]`
 * (with DATABASE_URL for a real server; a fresh schema is used). Starts a two-step workflow (no
 * delay) for every contact of a new team through POST /workflows/trigger and prints executions per
 * second until its trigger completes, then how long the details view of the workflow takes.
 */
import { createService } from "../../main.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";
import { topUp } from "../../shared/wallet.ts";
import { startWorker } from "../queue.ts";

const contacts = Number(Deno.args[0] ?? 10_000);
const second = Deno.args[1] === "sms" ? "sms" : "email";
const deps = await testDeps({ LOG_LEVEL: "silent" });
startWorker(deps);
const app = createService(deps);
const { team, keys } = await testTeam(deps, "enterprise");
const headers = { "X-API-Key": keys.live };
await topUp(deps.sql, team.id, 1_000_000_000);
await upsertTemplate(deps.sql, team.id, "email", "a", { subject: "Hi {{contact_first_name}}", html: "<p>a</p>" });
await upsertTemplate(deps.sql, team.id, "sms", "a", { body: "a {{plan}}" });
const rows = Array.from({ length: contacts }, (_, i) => ({
  team_id: team.id,
  email: `u${i}@example.com`,
  external_id: `e${i}`,
  first_name: "U",
  custom_fields: { phone: `+1415${String(i).padStart(7, "0")}` },
}));
for (let i = 0; i < rows.length; i += 1000) await deps.sql`insert into contacts ${deps.sql(rows.slice(i, i + 1000))}`;
const step = (order: number, channel: string) => ({
  step_order: order,
  channel_type: channel,
  configuration: { template_id: "a", delay_minutes: 0 },
});
const workflow = await (await app.request(
  "/api/v1/workflows",
  jsonRequest("POST", { name: "bench", event_type: "bench", steps: [step(1, "email"), step(2, second)] }, headers),
)).json();

const started = performance.now();
const { trigger_id } = await (await app.request(
  "/api/v1/workflows/trigger",
  jsonRequest("POST", { workflow_id: workflow.id, recipient_type: "all" }, headers),
)).json();
let summary: unknown;
while (true) {
  const trigger = await (await app.request(`/api/v1/triggers/${trigger_id}`, { headers })).json();
  if (trigger.status === "completed" || trigger.status === "failed") {
    summary = trigger.summary;
    break;
  }
  await new Promise((r) => setTimeout(r, 20));
}
const seconds = (performance.now() - started) / 1000;
console.log(`summary ${JSON.stringify(summary)}`);
console.log(
  `${contacts} executions (email + ${second}) in ${seconds.toFixed(2)} s: ${Math.round(contacts / seconds)}/s`,
);
for (let i = 0; i < 3; i++) {
  const t = performance.now();
  await (await app.request(`/api/v1/workflows/${workflow.id}`, { headers })).json();
  console.log(`details view: ${(performance.now() - t).toFixed(1)} ms`);
}
Deno.exit(0);
