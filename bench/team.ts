/**
 * Setting up what the send, fan-out and workflow scenarios need through the admin and public APIs:
 * fresh teams, a topped-up wallet, a 'bench' template on every channel, bulk contacts, workflows.
 */
import postgres from "postgres";
import { sendOnce } from "./load.ts";
import { type BenchContext, call, withKey } from "./context.ts";

/** The template key every send scenario uses. */
export const TEMPLATE_KEY = "bench";

/** Calls the admin API (Bearer ADMIN_TOKEN) and insists on a 2xx answer. */
export async function admin<T = unknown>(
  ctx: BenchContext,
  method: "POST" | "PUT" | "GET",
  path: string,
  body?: unknown,
): Promise<T> {
  return await call<T>(ctx, {
    method,
    path: `/admin/v1${path}`,
    headers: { authorization: `Bearer ${ctx.adminToken}` },
    body,
  });
}

/** A context acting as a new enterprise team (rate scenarios each use their own, so tags do not collide). */
export async function freshTeam(ctx: BenchContext, label: string): Promise<BenchContext> {
  const created = await admin<Pick<BenchContext, "team" | "keys">>(ctx, "POST", "/teams", {
    name: `bench-${label}-${ctx.runId}`,
    plan: "enterprise",
  });
  return { ...ctx, team: created.team, keys: created.keys, state: {} };
}

/** Tops the team's wallet up and puts the 'bench' template on every channel. */
export async function prepareTeam(ctx: BenchContext): Promise<void> {
  const team = `/teams/${ctx.team.id}`;
  await admin(ctx, "POST", `${team}/wallet/topup`, { amount: 1_000_000 });
  const templates: Record<string, unknown> = {
    email: { subject: "Bench {{name}}", html: "<p>Hello, this is the bench: {{name}}.</p>" },
    sms: { body: "Your bench code is {{name}}." },
    whatsapp: { body: "Hello {{1}}, your bench code is {{2}}.", category: "UTILITY" },
    push: { title: "Bench {{name}}", body: "Hello from the bench" },
  };
  for (const [channel, body] of Object.entries(templates)) {
    await admin(ctx, "PUT", `${team}/templates/${channel}/${TEMPLATE_KEY}`, body);
  }
}

/** What a contact of the bench looks like: unique email and external id, a phone, the given tags. */
export function benchContact(ctx: BenchContext, label: string, n: number, tags: string[]) {
  return {
    email: `${label}-${ctx.runId}-${n}@example.com`,
    external_id: `${label}-${ctx.runId}-${n}`,
    first_name: "Bench",
    tags,
    custom_fields: { phone: `+1415${String(n % 10_000_000).padStart(7, "0")}` },
  };
}

/**
 * Creates `count` contacts (1,000 at a time): with `direct`, straight into the bench's database when
 * it is a real server (ctx.databaseUrl), which keeps that work out of the service's memory (rate
 * scenarios measure its peak RSS); otherwise through POST /api/v1/contacts/bulk, `parallel` calls at
 * a time. Answers their external ids.
 */
export async function bulkContacts(
  ctx: BenchContext,
  label: string,
  count: number,
  tags: string[],
  options: { parallel?: number; direct?: boolean } = {},
): Promise<string[]> {
  if (options.direct && ctx.databaseUrl) return await sqlContacts(ctx, ctx.databaseUrl, label, count, tags);
  const parallel = options.parallel ?? 2;
  const chunks: number[] = [];
  for (let start = 0; start < count; start += 1000) chunks.push(start);
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < chunks.length) {
      const start = chunks[next++];
      const contacts = Array.from(
        { length: Math.min(1000, count - start) },
        (_, i) => benchContact(ctx, label, start + i, tags),
      );
      const res = await call<{ summary: { created_count: number } }>(ctx, {
        method: "POST",
        path: "/api/v1/contacts/bulk",
        headers: withKey(ctx),
        body: { contacts },
      });
      if (res.summary.created_count !== contacts.length) {
        throw new Error(`bulk create made ${res.summary.created_count} of ${contacts.length} contacts`);
      }
      ids.push(...contacts.map((c) => c.external_id));
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return ids;
}

/**
 * Inserts the contacts `bulkContacts` would create in one `INSERT … SELECT … FROM generate_series`:
 * the rows are built by the server (a million take seconds, against minutes as parameters).
 */
async function sqlContacts(
  ctx: BenchContext,
  url: string,
  label: string,
  count: number,
  tags: string[],
): Promise<string[]> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    // As benchContact makes them.
    const prefix = `${label}-${ctx.runId}-`;
    await sql`
      insert into contacts (team_id, email, external_id, first_name, tags, custom_fields)
      select ${ctx.team.id}, ${prefix} || n || '@example.com', ${prefix} || n, 'Bench', ${tags}::text[],
             jsonb_build_object('phone', '+1415' || lpad((n % 10000000)::text, 7, '0'))
      from generate_series(0, ${count - 1}::int) as n`;
  } finally {
    await sql.end();
  }
  return Array.from({ length: count }, (_, n) => `${label}-${ctx.runId}-${n}`);
}

/** Creates an active two-step workflow (no delay) listening for `eventType`; answers its id. */
export async function twoStepWorkflow(
  ctx: BenchContext,
  eventType: string,
  channels: [string, string] = ["email", "sms"],
): Promise<string> {
  const workflow = await call<{ id: string }>(ctx, {
    method: "POST",
    path: "/api/v1/workflows",
    headers: withKey(ctx),
    body: {
      name: `bench ${eventType}`,
      event_type: eventType,
      steps: channels.map((channel, i) => ({
        step_order: i + 1,
        channel_type: channel,
        step_name: `${channel} step`,
        configuration: { template_id: TEMPLATE_KEY, delay_minutes: 0, variables: { name: "wf" } },
      })),
    },
  });
  return workflow.id;
}

/** The trigger's status and summary (GET /api/v1/triggers/{id}). */
export interface TriggerView {
  status: string;
  summary: { total_contacts: number; sent: number; failed: number; filtered: number };
}

/** Polls GET /api/v1/triggers/{id} every `everyMs` until it is completed or failed (or `timeoutMs` passes). */
export async function untilDone(
  ctx: BenchContext,
  triggerId: string,
  timeoutMs: number,
  everyMs = 50,
): Promise<TriggerView> {
  const deadline = performance.now() + timeoutMs;
  while (true) {
    const res = await sendOnce(ctx.url, {
      method: "GET",
      path: `/api/v1/triggers/${triggerId}`,
      headers: withKey(ctx),
    });
    if (res.status === 200) {
      const view = JSON.parse(res.body) as TriggerView;
      if (view.status === "completed" || view.status === "failed") return view;
      if (performance.now() > deadline) {
        throw new Error(`trigger ${triggerId} still ${view.status} after ${timeoutMs / 1000} s: ${res.body}`);
      }
    } else if (res.status !== 404 || performance.now() > deadline) {
      throw new Error(`GET /api/v1/triggers/${triggerId} answered ${res.status}: ${res.body.slice(0, 300)}`);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
