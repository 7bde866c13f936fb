/**
 * Send scenarios (issue 3): accepted sends per second on every channel, the multi-channel trigger and
 * the event send, each compared with one awaited kv.enqueue in a bare Hono handler. The service
 * answers 201 once a send is queued; during a burst its worker defers delivery (SEND_DEFER_RATE), so
 * after each measurement the bench waits for the backlog to drain and notes how long it took.
 */
import { type BenchContext, type HttpScenario, withKey } from "./context.ts";
import { settleSends } from "./drain.ts";
import { bulkContacts, prepareTeam, TEMPLATE_KEY, twoStepWorkflow } from "./team.ts";

/** Contacts the multi-channel trigger and the event send address (round robin). */
const CONTACTS = 200;
const EVENT = "bench_signup";

/** An E.164 number per request, unique over ten million requests. */
const phone = (seq: number) => `+1555${String(seq % 10_000_000).padStart(7, "0")}`;

/** An Android (FCM) device token per request: 32+ characters of [A-Za-z0-9_:.-]. */
const deviceToken = (ctx: BenchContext, seq: number) => `bench_${ctx.runId}_${String(seq).padStart(24, "0")}`;

/**
 * Once per run: tops the bench team's wallet up, puts the 'bench' templates, creates the contacts
 * and the event's two-step workflow.
 */
async function prepared(ctx: BenchContext): Promise<void> {
  if (ctx.state.sendTeamReady) return;
  await prepareTeam(ctx);
  ctx.state.sendContacts = await bulkContacts(ctx, "send", CONTACTS, ["bench-send"]);
  ctx.state.eventWorkflow = await twoStepWorkflow(ctx, EVENT);
  ctx.state.sendTeamReady = true;
}

const contactOf = (ctx: BenchContext, seq: number) => {
  const ids = ctx.state.sendContacts as string[];
  return ids[seq % ids.length];
};

/** A send scenario: prepared team, kv-enqueue baseline, backlog drained after each measurement. */
function send(name: string, requests: HttpScenario["requests"]): HttpScenario {
  return {
    kind: "http",
    name,
    baseline: "kv-enqueue",
    setup: prepared,
    requests,
    settle: (ctx) => settleSends(ctx.url, ctx.quick),
  };
}

/** Every send scenario, in the order they run. */
export const SEND_SCENARIOS: HttpScenario[] = [
  send("SMS send (direct)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/sms/send",
    headers: withKey(ctx),
    body: {
      template_key: TEMPLATE_KEY,
      recipient_type: "direct_sms",
      direct_phone: phone(seq),
      variables: { name: "s" },
    },
  })),
  send("email send (direct)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/messages/send",
    headers: withKey(ctx),
    body: {
      recipient_type: "direct_email",
      direct_email: `send-${ctx.runId}-${seq}@example.com`,
      template_key: TEMPLATE_KEY,
      variables: { name: "e" },
    },
  })),
  send("WhatsApp send (direct)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/whatsapp/send",
    headers: withKey(ctx),
    body: {
      template_key: TEMPLATE_KEY,
      recipient_type: "direct_whatsapp",
      conversation_category: "UTILITY",
      direct_whatsapp: phone(seq),
      variables: { "1": "Ann", "2": "w" },
    },
  })),
  send("push send (direct)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/push/send",
    headers: withKey(ctx),
    body: {
      recipient_type: "direct_push",
      direct_device_token: deviceToken(ctx, seq),
      direct_platform: "android",
      title: "Bench",
      body: "Hello from the bench",
    },
  })),
  send("multi-channel trigger (contact; email+sms)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/messages/trigger",
    headers: withKey(ctx),
    body: {
      recipient_type: "contact",
      contact_external_id: contactOf(ctx, seq),
      channels: ["email", "sms"],
      template_key: TEMPLATE_KEY,
      variables: { name: "t" },
    },
  })),
  send("event send (2-step workflow)", (ctx) => (seq) => ({
    method: "POST",
    path: "/api/v1/events/send",
    headers: withKey(ctx, { "x-team-id": ctx.team.id }),
    body: {
      event_name: EVENT,
      user_info: { contact_external_id: contactOf(ctx, seq) },
      event_data: { n: seq },
      variables: { name: "v" },
    },
  })),
];
