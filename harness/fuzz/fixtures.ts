/** The two teams of the fuzz test: A owns the data B's key must never reach; B's own data lets requests succeed. */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { testTeam } from "../../shared/testing.ts";
import { topUp } from "../../shared/wallet.ts";
import type { RefPool } from "./generate.ts";

type App = OpenAPIHono<AppEnv>;

/** A caller of the app that answers status and parsed body, failing on an unexpected status. */
export function caller(app: App, headers: Record<string, string>) {
  return async (method: string, path: string, body?: unknown, expect = [200, 201]) => {
    const res = await app.request(path, {
      method,
      headers: { "Content-Type": "application/json", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!expect.includes(res.status)) throw new Error(`fixture ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
    // deno-lint-ignore no-explicit-any
    return (text ? JSON.parse(text) : {}) as any;
  };
}

/** One team's resources and keys. */
export interface TeamFixture {
  teamId: string;
  keys: { live: string; test: string; publishable: string };
  refs: RefPool;
  /** Strings only this team's data holds (A's: a response to B carrying one is a leak). */
  markers: string[];
  /** Contacts as created (A's are compared after the fuzzing). */
  contacts: { id: string; external_id: string; email: string; first_name: string }[];
  workflowId: string;
  webhookId: string;
  /** An OTP session (sandbox) and its email code (the first of `sessions`). */
  otp: { token: string; code: string };
  sessions: { token: string; code: string }[];
}

/** Creates a team with contacts, templates, a segment, a workflow, a webhook, a send and an OTP session. */
export async function teamFixture(app: App, deps: Deps, label: string, adminToken: string): Promise<TeamFixture> {
  const { team, keys } = await testTeam(deps, "enterprise");
  await topUp(deps.sql, team.id, 1_000_000_000);
  const marker = `${label}-${crypto.randomUUID().slice(0, 8)}`;
  const admin = caller(app, { Authorization: `Bearer ${adminToken}` });
  const call = caller(app, { "X-API-Key": keys.live });
  const templateKey = `${label}_tpl_${crypto.randomUUID().slice(0, 6)}`;
  await admin("PUT", `/admin/v1/teams/${team.id}/templates/email/${templateKey}`, {
    subject: `Subject ${marker}`,
    html: `<p>${marker} {{contact_first_name}}</p>`,
  });
  await admin("PUT", `/admin/v1/teams/${team.id}/templates/sms/${templateKey}`, { body: `SMS ${marker}` });
  await admin("PUT", `/admin/v1/teams/${team.id}/templates/whatsapp/${templateKey}`, {
    body: `WA ${marker} {{1}}`,
    category: "UTILITY",
  });
  const push = await admin("PUT", `/admin/v1/teams/${team.id}/templates/push/${templateKey}`, {
    title: `Push ${marker}`,
    body: `Body ${marker}`,
  });
  const segmentId = `${label}-segment`;
  await admin("PUT", `/admin/v1/teams/${team.id}/segments/${segmentId}`, {
    name: `Segment ${marker}`,
    filter: { tags_all: [`${label}-tag`] },
  });
  const contacts = [];
  for (let i = 0; i < 4; i++) {
    const contact = await call("POST", "/api/v1/contacts", {
      email: `${marker}.${i}@example.com`,
      external_id: `${label}-ext-${i}-${crypto.randomUUID().slice(0, 8)}`,
      first_name: `First-${marker}-${i}`,
      tags: [`${label}-tag`, "shared-tag"],
      custom_fields: { phone: `+4477009${String(100_000 + i)}`, secret: marker },
    }, [201]);
    contacts.push({
      id: contact.id,
      external_id: contact.external_id,
      email: contact.email,
      first_name: contact.first_name,
    });
  }
  await call("PATCH", `/api/v1/contacts/external/${contacts[0].external_id}/device-token`, {
    token: `fcm-${marker}-${"t".repeat(40)}`,
    platform: "android",
  });
  const workflow = await call("POST", "/api/v1/workflows", {
    name: `Workflow ${label} ${crypto.randomUUID().slice(0, 8)}`,
    event_type: `${label}_event`,
    steps: [{ step_order: 1, channel_type: "email", step_name: "one", configuration: { template_id: templateKey } }],
  }, [201]);
  const webhook = await call("POST", "/api/v1/webhooks", { url: `https://93.184.216.34/${marker}` }, [201]);
  // One send per channel to a contact, for trigger and execution ids of every channel.
  const to = { recipient_type: "contact", contact_external_id: contacts[1].external_id, template_key: templateKey };
  const sends = [
    await call("POST", "/api/v1/messages/send", to, [201]),
    await call("POST", "/api/v1/sms/send", to, [201]),
    await call("POST", "/api/v1/whatsapp/send", { ...to, conversation_category: "UTILITY" }, [201]),
    await call("POST", "/api/v1/push/send", { ...to, contact_external_id: contacts[0].external_id }, [201]),
  ];
  const started = await call("POST", "/api/v1/workflows/trigger", {
    workflow_id: workflow.id,
    recipient_type: "contact",
    contact_external_id: contacts[2].external_id,
  }, [201]);
  const executionIds: string[] = [];
  for (const send of sends) {
    const direct = await call("GET", `/api/v1/triggers/${send.trigger_id}/direct`);
    executionIds.push(...direct.executions.map((e: { execution: { id: string } }) => e.execution.id));
  }
  const sessions = [];
  for (const contact of contacts.slice(2)) {
    const otp = await call("POST", "/api/v1/otp/send", {
      channels: ["email"],
      recipients: { email: contact.email },
      sandbox_mode: true,
    });
    const code = otp.sandbox_otps?.email;
    if (typeof code !== "string") throw new Error(`fixture: no sandbox code in ${JSON.stringify(otp)}`);
    sessions.push({ token: otp.session_token as string, code });
  }
  return {
    teamId: team.id,
    keys,
    refs: {
      ids: [
        ...contacts.map((c) => c.id),
        workflow.id,
        webhook.id,
        ...sends.map((send) => send.trigger_id),
        started.trigger_id,
        ...executionIds,
        ...(started.execution_ids ?? []),
        push.id,
        segmentId,
        team.id,
      ],
      externalIds: contacts.map((c) => c.external_id),
      // The last session is kept out of the pools: the resend examples use it, unlocked.
      tokens: sessions.slice(0, -1).map((session) => session.token),
      workflowNames: [workflow.name],
      templateKeys: [templateKey],
    },
    markers: [marker],
    contacts,
    workflowId: workflow.id,
    webhookId: webhook.id,
    otp: sessions[0],
    sessions,
  };
}

/** What must still hold of team A after team B's fuzzing: its data unchanged, its OTP session unused. */
export async function checkUntouched(app: App, a: TeamFixture): Promise<string[]> {
  const problems: string[] = [];
  const call = caller(app, { "X-API-Key": a.keys.live });
  for (const c of a.contacts) {
    const res = await app.request(`/api/v1/contacts/${c.id}`, { headers: { "X-API-Key": a.keys.live } });
    const body = await res.json();
    if (res.status !== 200) {
      problems.push(`team A's contact ${c.id} is gone (${res.status})`);
      continue;
    }
    for (const field of ["email", "external_id", "first_name"] as const) {
      if (body[field] !== c[field]) problems.push(`team A's contact ${c.id}: ${field} changed to ${body[field]}`);
    }
    if (body.is_unsubscribed) problems.push(`team A's contact ${c.id} was unsubscribed`);
  }
  const workflow = await app.request(`/api/v1/workflows/${a.workflowId}`, { headers: { "X-API-Key": a.keys.live } });
  if (workflow.status !== 200) problems.push(`team A's workflow answers ${workflow.status}`);
  await workflow.body?.cancel();
  const hooks = await call("GET", "/api/v1/webhooks");
  const list = Array.isArray(hooks) ? hooks : hooks.data ?? hooks.webhooks ?? [];
  if (!list.some((h: { id: string }) => h.id === a.webhookId)) problems.push("team A's webhook is gone");
  const verify = await app.request("/api/v1/otp/verify", {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-API-Key": a.keys.live },
    body: JSON.stringify({ session_token: a.otp.token, otps: { email: a.otp.code } }),
  });
  const verified = await verify.json();
  if (verify.status !== 200 || verified.verified !== true) {
    problems.push(
      `team A's OTP session no longer verifies: ${verify.status} ${JSON.stringify(verified).slice(0, 200)}`,
    );
  }
  return problems;
}

/** Tables of a team's own resources, restored between operations (with the column that names the team). */
const RESTORED = ["contacts", "device_tokens", "workflows", "webhook_endpoints", "segments", "templates"] as const;

/**
 * Snapshots a team's resources; the returned function puts back any the fuzzing deleted (same ids),
 * so that each operation finds the references of the pools alive.
 */
export async function snapshotTeam(deps: Deps, teamId: string): Promise<() => Promise<void>> {
  const sql = deps.sql;
  const saved = new Map<string, string>();
  for (const table of RESTORED) {
    const [row]: [{ rows: string }] = await sql`
      select coalesce(json_agg(t), '[]')::text as rows from ${sql(table)} t where team_id = ${teamId}`;
    saved.set(table, row.rows);
  }
  const [steps]: [{ rows: string }] = await sql`
    select coalesce(json_agg(s), '[]')::text as rows from workflow_steps s
    join workflows w on w.id = s.workflow_id where w.team_id = ${teamId}`;
  // Generated columns (device_tokens.provider) cannot be inserted: each table's writable ones are named.
  const writable = new Map<string, string[]>();
  for (const table of RESTORED) {
    const columns: { column_name: string }[] = await sql`
      select column_name from information_schema.columns
      where table_schema = current_schema() and table_name = ${table} and is_generated = 'NEVER'
      order by ordinal_position`;
    writable.set(table, columns.map((c) => c.column_name));
  }
  return async () => {
    // A contact made since with a saved one's email or external id would keep the saved one out.
    await sql`
      delete from contacts c using json_populate_recordset(null::contacts, ${saved.get("contacts")!}::text::json) s
      where c.team_id = s.team_id and c.id <> s.id and (lower(c.email) = lower(s.email) or c.external_id = s.external_id)`;
    for (const table of RESTORED) {
      await sql`
        insert into ${sql(table)} (${sql(writable.get(table)!)})
        select ${sql(writable.get(table)!)} from json_populate_recordset(null::${sql(table)}, ${saved.get(
        table,
      )!}::text::json) r
        ${table === "device_tokens" ? sql`where exists (select 1 from contacts c where c.id = r.contact_id)` : sql``}
        on conflict do nothing`;
    }
    await sql`
      insert into workflow_steps select * from json_populate_recordset(null::workflow_steps, ${steps.rows}::text::json)
      on conflict do nothing`;
  };
}
