/**
 * Rate scenarios (issue 3 fan-out, workflow throughput; issue 29 the large fan-out and the sustained
 * SMS rate): each on a fresh team so that its tag reaches exactly its own contacts. Setup creates the
 * contacts (in the database with DATABASE_URL, else through POST /api/v1/contacts/bulk); the run
 * starts one send (or workflow trigger) for all of them and polls its trigger until it completes.
 */
import type { BenchContext, RateResult, RateScenario } from "./context.ts";
import { call, withKey } from "./context.ts";
import { drain } from "./drain.ts";
import { progress } from "./measure.ts";
import { describePgCost, measurePg } from "./pg_cost.ts";
import { peakRssMiB, resetPeakRss, rssMiB } from "./server.ts";
import { SUSTAINED_SCENARIO } from "./sustained.ts";
import { bulkContacts, freshTeam, prepareTeam, TEMPLATE_KEY, twoStepWorkflow, untilDone } from "./team.ts";

/** Contacts of the fan-out (one email to each) and of the workflow run (one execution each). */
export const FANOUT_CONTACTS = { full: 100_000, quick: 20_000 };
export const WORKFLOW_CONTACTS = { full: 10_000, quick: 2_000 };
/** Contacts of the fan-out whose team has a webhook endpoint subscribed to `message.sent`. */
export const WEBHOOK_FANOUT_CONTACTS = { full: 20_000, quick: 5_000 };

/** Creates a fresh team with templates and `count` contacts tagged `tag`; leaves it in `ctx.state[key]`. */
async function teamWithContacts(ctx: BenchContext, label: string, count: number, tag: string): Promise<BenchContext> {
  const team = await freshTeam(ctx, label);
  await prepareTeam(team);
  const started = performance.now();
  await bulkContacts(team, label, count, [tag], { direct: true });
  const seconds = (performance.now() - started) / 1000;
  const how = ctx.databaseUrl ? "in the database" : "through /contacts/bulk";
  progress(
    `${label}: ${count.toLocaleString("en-US")} contacts created ${how} in ${seconds.toFixed(1)} s ` +
      `(${Math.round(count / seconds).toLocaleString("en-US")}/s)`,
  );
  // Whatever setup left queued (nothing, normally) is done before the clock starts.
  await drain(ctx.url, { quietMs: 500 });
  return team;
}

/**
 * Resets the service's peak RSS (when the kernel lets us) and answers a reader for the note: the
 * peak during the run, and the RSS at its start (what earlier scenarios left: V8 and PGlite keep
 * the memory they grew to).
 */
async function watchRss(ctx: BenchContext): Promise<() => Promise<string>> {
  const reset = await resetPeakRss(ctx.servicePid);
  const atStart = await rssMiB(ctx.servicePid);
  return async () => {
    const peak = await peakRssMiB(ctx.servicePid);
    if (peak === undefined) return "peak RSS unknown";
    const start = atStart === undefined ? "" : ` (${atStart.toFixed(0)} at start)`;
    return `peak RSS ${peak.toFixed(0)} MiB${reset ? start : " (whole run)"}`;
  };
}

/**
 * A loopback webhook endpoint in the bench's own process (so its work is not the service's): answers
 * 204 to every POST and counts the distinct event ids it received.
 */
function webhookReceiver(): { url: string; received: Set<string>; close: () => Promise<void> } {
  const received = new Set<string>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    // Read as a receiver that checks the signature would (a body left unread closes the connection).
    await req.arrayBuffer();
    const id = req.headers.get("webhook-id");
    if (id) received.add(id);
    return new Response(null, { status: 204 });
  });
  return { url: `http://127.0.0.1:${server.addr.port}/hook`, received, close: () => server.shutdown() };
}

/** Polls until `done()` holds (every 20 ms), or throws after `timeoutMs`. */
async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`${what}: not done after ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sends the bench email to every contact tagged `tag` and waits for the trigger: its summary and seconds. */
async function emailTag(team: BenchContext, tag: string) {
  const started = performance.now();
  const accepted = await call<{ trigger_id: string }>(team, {
    method: "POST",
    path: "/api/v1/messages/send",
    headers: withKey(team),
    body: { recipient_type: "tag", tags: [tag], template_key: TEMPLATE_KEY, variables: { name: tag } },
  });
  const view = await untilDone(team, accepted.trigger_id, 600_000);
  return { ...view.summary, seconds: (performance.now() - started) / 1000 };
}

const count = (ctx: BenchContext, counts: { full: number; quick: number }) => ctx.quick ? counts.quick : counts.full;

/** One email send to the `tag` of `team` (`wanted` contacts): deliveries, peak RSS and database cost. */
async function fanOut(ctx: BenchContext, team: BenchContext, tag: string, wanted: number): Promise<RateResult> {
  const rss = await watchRss(ctx);
  const [{ total_contacts, sent, failed, filtered, seconds }, pg] = await measurePg(ctx.pg, () => emailTag(team, tag));
  const cost = pg ? `; ${describePgCost(pg, { delivery: total_contacts })}` : "";
  const note = `${await rss()}; sent ${sent}, failed ${failed}, filtered ${filtered}${cost}`;
  progress(`fan-out: ${total_contacts} recipients in ${seconds.toFixed(2)} s; ${note}`);
  return { count: total_contacts, seconds, errors: failed + Math.abs(wanted - total_contacts), note };
}

/** Every rate scenario, in the order they run. */
export const RATE_SCENARIOS: RateScenario[] = [
  {
    kind: "rate",
    name: "fan-out: email to a tag",
    unit: "deliveries",
    target: 20_000,
    async setup(ctx) {
      ctx.state.fanoutTeam = await teamWithContacts(ctx, "fanout", count(ctx, FANOUT_CONTACTS), "fanout");
    },
    async run(ctx) {
      const result = await fanOut(ctx, ctx.state.fanoutTeam as BenchContext, "fanout", count(ctx, FANOUT_CONTACTS));
      ctx.state.fanoutRate = result.count / result.seconds;
      return result;
    },
  },
  {
    kind: "rate",
    name: "fan-out: email to a tag (--fanout)",
    unit: "deliveries",
    target: 20_000,
    enabled: (ctx) => ctx.fanoutContacts !== undefined,
    async setup(ctx) {
      ctx.state.largeTeam = await teamWithContacts(ctx, "large", ctx.fanoutContacts!, "large");
    },
    async run(ctx) {
      const wanted = ctx.fanoutContacts!;
      const result = await fanOut(ctx, ctx.state.largeTeam as BenchContext, "large", wanted);
      const smaller = ctx.state.fanoutRate as number | undefined;
      const size = count(ctx, FANOUT_CONTACTS).toLocaleString("en-US");
      return {
        ...result,
        name: `fan-out: email to a tag of ${wanted.toLocaleString("en-US")}`,
        // Cost grows linearly when this rate is that of the usual size (issue 29: within 10 %).
        ...(smaller ? { compareTo: { label: `fan-out of ${size}`, rate: smaller } } : {}),
      };
    },
  },
  {
    kind: "rate",
    name: "fan-out with a message.sent webhook",
    unit: "deliveries",
    async setup(ctx) {
      const team = await teamWithContacts(ctx, "hooked", count(ctx, WEBHOOK_FANOUT_CONTACTS), "hooked");
      const receiver = webhookReceiver();
      await call(team, {
        method: "POST",
        path: "/api/v1/webhooks",
        headers: withKey(team),
        body: { url: receiver.url, events: ["message.sent"] },
      });
      team.state.receiver = receiver;
      ctx.state.hookedTeam = team;
    },
    async run(ctx) {
      const team = ctx.state.hookedTeam as BenchContext;
      const receiver = team.state.receiver as ReturnType<typeof webhookReceiver>;
      const rss = await watchRss(ctx);
      const started = performance.now();
      try {
        const { total_contacts, sent, failed, filtered, seconds } = await emailTag(team, "hooked");
        await until(() => receiver.received.size >= sent, 600_000, "message.sent events");
        const eventSeconds = (performance.now() - started) / 1000;
        const events = `${receiver.received.size} message.sent events in ${eventSeconds.toFixed(2)} s ` +
          `(${Math.round(receiver.received.size / eventSeconds).toLocaleString("en-US")}/s)`;
        const note = `${events}; ${await rss()}; sent ${sent}, failed ${failed}, filtered ${filtered}`;
        progress(`fan-out with a webhook: ${total_contacts} recipients in ${seconds.toFixed(2)} s; ${note}`);
        const wanted = count(ctx, WEBHOOK_FANOUT_CONTACTS);
        return { count: total_contacts, seconds, errors: failed + Math.abs(wanted - total_contacts), note };
      } finally {
        await receiver.close();
      }
    },
  },
  {
    kind: "rate",
    name: "workflow: 2 steps (email, sms) per contact",
    unit: "executions",
    target: 2_000,
    async setup(ctx) {
      const team = await teamWithContacts(ctx, "workflow", count(ctx, WORKFLOW_CONTACTS), "wf");
      team.state.workflowId = await twoStepWorkflow(team, `bench_wf_${ctx.runId}`);
      ctx.state.workflowTeam = team;
    },
    async run(ctx) {
      const team = ctx.state.workflowTeam as BenchContext;
      const rss = await watchRss(ctx);
      const started = performance.now();
      const accepted = await call<{ trigger_id: string }>(team, {
        method: "POST",
        path: "/api/v1/workflows/trigger",
        headers: withKey(team),
        body: { workflow_id: team.state.workflowId, recipient_type: "tag", tags: ["wf"] },
      });
      const view = await untilDone(team, accepted.trigger_id, 600_000);
      const seconds = (performance.now() - started) / 1000;
      const wanted = count(ctx, WORKFLOW_CONTACTS);
      const { total_contacts, sent, failed, filtered } = view.summary;
      // The trigger counts its steps' messages: two an execution (email, then sms).
      const executions = total_contacts / 2;
      const note = `${await rss()}; sent ${sent}, failed ${failed}, filtered ${filtered}`;
      progress(`workflow: ${executions} executions in ${seconds.toFixed(2)} s; ${note}`);
      return { count: executions, seconds, errors: failed + Math.abs(wanted - executions), note };
    },
  },
  // Last of the rates: it leaves the service's heap grown, and its SMS backlog is drained before it ends.
  SUSTAINED_SCENARIO,
];
