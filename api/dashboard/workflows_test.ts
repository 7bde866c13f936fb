import assert from "node:assert/strict";
import type { DashboardRole } from "../../shared/dashboard_users.ts";
import type { Deps } from "../../shared/deps.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { dbTest, jsonRequest, testTeam } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";
import { workflowBody } from "../workflows/testing.ts";
import { allPages, dashboardFixture, nextLink, testUser, Visitor } from "./testing.ts";

/** Templates under `welcome` and `reminder` on every workflow channel. */
async function stepTemplates(deps: Deps, teamId: string) {
  for (const key of ["welcome", "reminder"]) {
    await upsertTemplate(deps.sql, teamId, "email", key, { subject: `${key} {{plan}}`, html: `<p>${key}</p>` });
    await upsertTemplate(deps.sql, teamId, "sms", key, { body: `${key} sms` });
    await upsertTemplate(deps.sql, teamId, "whatsapp", key, { body: `${key} wa {{1}}`, category: "UTILITY" });
  }
}

/** A team with step templates, signed in as `role`, and the API under its live key. */
async function workflowFixture(role: DashboardRole = "member") {
  const f = await dashboardFixture();
  await stepTemplates(f.deps, f.team.id);
  const v = f.visitor();
  await v.signIn(role === "owner" ? f.owner.email : f.member.email);
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await f.app.request(`/api/v1${path}`, jsonRequest(method, body, { "X-API-Key": f.keys.live }));
    return { status: res.status, body: await res.json() };
  };
  const create = async (overrides: Record<string, unknown> = {}) => {
    const res = await api("POST", "/workflows", workflowBody(overrides));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as { id: string; updated_at: string; steps: { step_order: number }[] };
  };
  return { ...f, v, api, create };
}

/** The version field a workflow page's forms carry. */
function versionOf(html: string): string {
  const version = /name="version" value="(\d+)"/.exec(html)?.[1];
  assert.ok(version, "no version field on the page");
  return version;
}

/** A step's form fields as posted. */
function stepFields(step: { channel: string; template: string; delay: string; name?: string; active?: boolean }) {
  return {
    channel: step.channel,
    template: step.template,
    delay_minutes: step.delay,
    step_name: step.name ?? "",
    ...(step.active === false ? {} : { is_active: "on" }),
  };
}

/** The workflow ids the list links to, top to bottom. */
function listed(html: string): string[] {
  return [...html.matchAll(/<a href="\/dashboard\/workflows\/([0-9a-f-]{36})">/g)].map((m) => m[1]);
}

/**
 * Executions of a workflow written straight to Postgres as the worker records them, one second
 * apart (oldest first), each under a trigger of its own; their ids and triggers, oldest first.
 */
async function insertExecutions(deps: Deps, teamId: string, workflowId: string, count: number) {
  const start = Date.now() - 86_400_000;
  const rows = Array.from({ length: count }, (_, i) => ({
    id: crypto.randomUUID(),
    team_id: teamId,
    workflow_id: workflowId,
    trigger_id: crypto.randomUUID(),
    contact_id: null,
    source: "api",
    status: "COMPLETED",
    current_step: null,
    created_at: new Date(start + i * 1000),
    started_at: new Date(start + i * 1000),
    completed_at: new Date(start + i * 1000 + 500),
  }));
  await deps.sql`insert into workflow_executions ${deps.sql(rows)}`;
  return rows;
}

dbTest("a team without workflows is told how to make the first one; the nav leads there", async () => {
  const { v } = await workflowFixture();
  const page = await v.get("/dashboard/workflows");
  assert.equal(page.status, 200);
  assert.match(page.html, /No workflows yet/);
  assert.match(page.html, /POST \/api\/v1\/workflows/);
  assert.match(page.html, /<a href="\/dashboard\/workflows" aria-current="page">Workflows<\/a>/);
  assert.match(page.html, /<form method="post" action="\/dashboard\/workflows">/);
});

dbTest("a team without templates is sent to make one before a workflow", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.member.email);
  const page = await v.get("/dashboard/workflows");
  assert.match(page.html, /first <a href="\/dashboard\/templates\/email">create a template<\/a>/);
  assert.doesNotMatch(page.html, /Create the workflow/);
});

dbTest(
  "the list shows each workflow's event, state, step count and last run (linking to its start), newest first",
  async () => {
    const f = await sendingFixture();
    await stepTemplates(f.deps, f.team.id);
    const member = await testUser(f.deps, f.team.id, "member");
    const v = new Visitor(f.app);
    await v.signIn(member.email);
    const oneStep = [{ step_order: 1, channel_type: "email", configuration: { template_id: "welcome" } }];
    const older = await f.send("/api/v1/workflows", workflowBody({ event_type: "order_paid", steps: oneStep }));
    const newer = await f.send("/api/v1/workflows", workflowBody({ is_active: false }));
    const contact = await f.contact({ external_id: `c-${crypto.randomUUID()}` });
    const res = await f.post("/api/v1/workflows/trigger", {
      workflow_id: older.body.id,
      recipient_type: "contact",
      contact_external_id: contact.external_id,
    });
    const { trigger_id } = await f.finished(res);

    const page = await v.get("/dashboard/workflows");
    assert.deepEqual(listed(page.html), [newer.body.id, older.body.id]);
    const row = (id: string) => new RegExp(`data-workflow="${id}"[\\s\\S]*?</tr>`).exec(page.html)![0];
    assert.match(row(older.body.id), /<code>order_paid<\/code>/);
    assert.match(row(older.body.id), /badge-active">active</);
    assert.match(row(older.body.id), /<td data-label="Steps" class="number">1</);
    assert.match(row(newer.body.id), /<td data-label="Steps" class="number">2</);
    assert.ok(row(older.body.id).includes(`href="/dashboard/sends/${trigger_id}"`));
    assert.match(row(newer.body.id), /badge-inactive">inactive</);
    assert.match(row(newer.body.id), /Never/);

    const found = await v.get(`/dashboard/workflows?q=${encodeURIComponent(newer.body.name)}`);
    assert.deepEqual(listed(found.html), [newer.body.id]);
    const none = await v.get("/dashboard/workflows?q=no-such-workflow");
    assert.match(none.html, /No workflow&#39;s name or description contains “no-such-workflow”/);
  },
);

dbTest("a member creates a workflow from the dashboard: inactive unless ticked, as the API reads it", async () => {
  const { v, api } = await workflowFixture("member");
  const created = await v.post("/dashboard/workflows", {
    name: "Welcome series",
    event_type: "user_signup",
    ...stepFields({ channel: "sms", template: "welcome", delay: "5", name: "Hello" }),
  });
  assert.equal(created.status, 303, created.html);
  const location = created.headers.get("location")!;
  const id = /\/dashboard\/workflows\/([0-9a-f-]{36})\?done=created$/.exec(location)?.[1];
  assert.ok(id, location);
  const page = await v.get(location);
  assert.match(page.html, /The workflow is created/);
  assert.match(page.html, /badge-inactive/);

  const stored = await api("GET", `/workflows/${id}`);
  assert.equal(stored.body.name, "Welcome series");
  assert.equal(stored.body.event_type, "user_signup");
  assert.equal(stored.body.is_active, false);
  assert.deepEqual(
    stored.body.steps.map((s: Record<string, unknown>) => [s.channel_type, s.step_name, s.configuration]),
    [
      ["sms", "Hello", { template_id: "welcome", delay_minutes: 5 }],
    ],
  );

  const active = await v.post("/dashboard/workflows", {
    name: "At once",
    event_type: "user_signup",
    workflow_active: "on",
    ...stepFields({ channel: "email", template: "welcome", delay: "" }),
  });
  const activeId = /workflows\/([0-9a-f-]{36})/.exec(active.headers.get("location")!)![1];
  assert.equal((await api("GET", `/workflows/${activeId}`)).body.is_active, true);
});

dbTest("a new workflow the API would refuse comes back as typed with the reasons, and nothing is made", async () => {
  const { v, api } = await workflowFixture();
  const blank = await v.post("/dashboard/workflows", {
    name: " ",
    event_type: "user_signup",
    ...stepFields({ channel: "email", template: "welcome", delay: "-1" }),
  });
  assert.equal(blank.status, 400);
  assert.match(blank.html, /The workflow was not created/);
  assert.match(blank.html, /The name should not be empty/);
  assert.match(blank.html, /Step 1: the delay in minutes must not be less than 0/);
  assert.match(blank.html, /value="user_signup"/);

  const wrongChannel = await v.post("/dashboard/workflows", {
    name: "Wrong channel",
    event_type: "user_signup",
    ...stepFields({ channel: "sms", template: "no-such-sms-template", delay: "0" }),
  });
  assert.equal(wrongChannel.status, 400);
  assert.match(
    wrongChannel.html,
    /Step 1: Template &#39;no-such-sms-template&#39; not found for team on the sms channel/,
  );
  assert.equal((await api("GET", "/workflows")).body.total, 0);
});

dbTest(
  "a step's channel, template, delay and activity are edited on the page, and the API reads the change",
  async () => {
    const { v, api, create } = await workflowFixture("member");
    const workflow = await create({
      steps: [
        {
          step_order: 1,
          channel_type: "email",
          step_name: "Welcome",
          configuration: { template_id: "welcome", delay_minutes: 0, variables: { plan: "gold" } },
        },
        { step_order: 2, channel_type: "sms", configuration: { template_id: "reminder", delay_minutes: 60 } },
      ],
    });
    const page = await v.get(`/dashboard/workflows/${workflow.id}`);
    assert.equal(page.status, 200);
    assert.match(page.html, /Step 1: Welcome/);
    assert.match(page.html, /id="step-2-delay" name="delay_minutes" type="number"[^>]*value="60"/);

    const saved = await v.post(`/dashboard/workflows/${workflow.id}/steps/1`, {
      version: versionOf(page.html),
      ...stepFields({ channel: "whatsapp", template: "reminder", delay: "15", name: "Nudge", active: false }),
    });
    assert.equal(saved.status, 303, saved.html);
    assert.equal(saved.headers.get("location"), `/dashboard/workflows/${workflow.id}?done=saved#step-1`);
    const steps = (await api("GET", `/workflows/${workflow.id}`)).body.steps;
    assert.deepEqual(steps[0], {
      ...steps[0],
      channel_type: "whatsapp",
      step_name: "Nudge",
      is_active: false,
      // The step's variables are not on the form: they are kept.
      configuration: { template_id: "reminder", delay_minutes: 15, variables: { plan: "gold" } },
    });
    assert.deepEqual(steps[1].configuration, { template_id: "reminder", delay_minutes: 60 });
    const after = await v.get(`/dashboard/workflows/${workflow.id}?done=saved`);
    assert.match(after.html, /The step is saved/);
    assert.match(after.html, /Step 1: Nudge\s*<span class="tag">skipped<\/span>/);
  },
);

dbTest("a refused step edit comes back as typed with the reason; a stale page saves nothing (409)", async () => {
  const { v, api, create, deps, team } = await workflowFixture();
  await upsertTemplate(deps.sql, team.id, "email", "email-only", { subject: "S", html: "<p>H</p>" });
  const workflow = await create();
  const page = await v.get(`/dashboard/workflows/${workflow.id}`);
  const version = versionOf(page.html);

  const negative = await v.post(`/dashboard/workflows/${workflow.id}/steps/2`, {
    version,
    ...stepFields({ channel: "sms", template: "reminder", delay: "-5" }),
  });
  assert.equal(negative.status, 400);
  assert.match(negative.html, /id="step-2-errors"/);
  assert.match(negative.html, /Step 2: the delay in minutes must not be less than 0/);
  assert.match(negative.html, /id="step-2-delay"[^>]*value="-5"/);

  const notANumber = await v.post(`/dashboard/workflows/${workflow.id}/steps/2`, {
    version,
    ...stepFields({ channel: "sms", template: "reminder", delay: "soon" }),
  });
  assert.equal(notANumber.status, 400);
  assert.match(notANumber.html, /Step 2: the delay in minutes must be a number/);

  // A key only email has: a WhatsApp step cannot send it.
  const wrong = await v.post(`/dashboard/workflows/${workflow.id}/steps/2`, {
    version,
    ...stepFields({ channel: "whatsapp", template: "email-only", delay: "0" }),
  });
  assert.equal(wrong.status, 400);
  assert.match(wrong.html, /Step 2: Template &#39;email-only&#39; not found for team on the whatsapp channel/);
  assert.deepEqual((await api("GET", `/workflows/${workflow.id}`)).body.steps[1].configuration, {
    template_id: "reminder",
    delay_minutes: 60,
  });

  await api("PATCH", `/workflows/${workflow.id}`, { name: "Renamed through the API" });
  const stale = await v.post(`/dashboard/workflows/${workflow.id}/steps/2`, {
    version,
    ...stepFields({ channel: "sms", template: "reminder", delay: "1" }),
  });
  assert.equal(stale.status, 409);
  assert.match(stale.html, /The workflow changed since this page was loaded/);
  assert.match(stale.html, /Renamed through the API/);
  assert.equal((await api("GET", `/workflows/${workflow.id}`)).body.steps[1].configuration.delay_minutes, 60);
});

dbTest("steps are added at the end and removed; the only step left cannot be removed", async () => {
  const { v, api, create } = await workflowFixture();
  const workflow = await create();
  let page = await v.get(`/dashboard/workflows/${workflow.id}`);
  const added = await v.post(`/dashboard/workflows/${workflow.id}/steps`, {
    version: versionOf(page.html),
    ...stepFields({ channel: "whatsapp", template: "welcome", delay: "1440", name: "Last call" }),
  });
  assert.equal(added.status, 303, added.html);
  let steps = (await api("GET", `/workflows/${workflow.id}`)).body.steps;
  assert.deepEqual(steps.map((s: Record<string, unknown>) => [s.step_order, s.channel_type, s.step_name]), [
    [1, "email", "Welcome email"],
    [2, "sms", "Reminder"],
    [3, "whatsapp", "Last call"],
  ]);
  assert.equal(steps[2].configuration.delay_minutes, 1440);

  for (const order of [1, 3]) {
    page = await v.get(`/dashboard/workflows/${workflow.id}`);
    const removed = await v.post(`/dashboard/workflows/${workflow.id}/steps/${order}/delete`, {
      version: versionOf(page.html),
    });
    assert.equal(removed.status, 303, removed.html);
  }
  steps = (await api("GET", `/workflows/${workflow.id}`)).body.steps;
  assert.deepEqual(steps.map((s: Record<string, unknown>) => s.step_order), [2]);
  page = await v.get(`/dashboard/workflows/${workflow.id}`);
  assert.doesNotMatch(page.html, /Remove step 2/);
  const last = await v.post(`/dashboard/workflows/${workflow.id}/steps/2/delete`, { version: versionOf(page.html) });
  assert.equal(last.status, 400);
  assert.match(last.html, /A workflow needs at least one step/);
  assert.equal((await api("GET", `/workflows/${workflow.id}`)).body.steps.length, 1);
  assert.equal((await v.post(`/dashboard/workflows/${workflow.id}/steps/7/delete`, {})).status, 404);
});

dbTest("a workflow is activated and deactivated on its page: the API's starts follow", async () => {
  const { v, api, create } = await workflowFixture();
  const workflow = await create({ is_active: false });
  const start = () => api("POST", "/workflows/trigger", { workflow_id: workflow.id, recipient_type: "all" });
  assert.equal((await start()).body.message, "Workflow is not active");

  let page = await v.get(`/dashboard/workflows/${workflow.id}`);
  assert.match(page.html, /<button type="submit">Activate<\/button>/);
  const on = await v.post(`/dashboard/workflows/${workflow.id}/activate`, { version: versionOf(page.html) });
  assert.equal(on.status, 303);
  assert.equal((await api("GET", `/workflows/${workflow.id}`)).body.is_active, true);
  assert.equal((await start()).status, 201);
  page = await v.get(on.headers.get("location")!);
  assert.match(page.html, /The workflow is active/);

  const off = await v.post(`/dashboard/workflows/${workflow.id}/deactivate`, { version: versionOf(page.html) });
  assert.equal(off.status, 303);
  assert.equal((await api("GET", `/workflows/${workflow.id}`)).body.is_active, false);
  assert.equal((await start()).status, 400);
});

dbTest("the execution history pages newest first to the end, each execution linking to its start", async () => {
  const { v, deps, team, create } = await workflowFixture();
  const workflow = await create();
  const rows = await insertExecutions(deps, team.id, workflow.id, 60);
  await deps.sql`insert into workflow_step_runs ${
    deps.sql(
      rows.slice(0, 3).map((r, i) => ({
        execution_id: r.id,
        step_order: 1,
        workflow_id: workflow.id,
        channel_type: "email",
        status: i === 0 ? "FAILED" : "SENT",
      })),
    )
  }`;
  const executionIds = (html: string) => [...html.matchAll(/data-execution="([0-9a-f-]{36})"/g)].map((m) => m[1]);
  const { ids, pages } = await allPages(v, `/dashboard/workflows/${workflow.id}`, executionIds);
  assert.deepEqual(ids, rows.map((r) => r.id).reverse());
  assert.equal(pages, 3);

  const first = await v.get(`/dashboard/workflows/${workflow.id}`);
  assert.ok(first.html.includes(`href="/dashboard/sends/${rows.at(-1)!.trigger_id}"`));
  const lastPage = await allPages(v, `/dashboard/workflows/${workflow.id}`, (html) => [html]);
  const oldest = lastPage.ids.at(-1)!;
  const row = new RegExp(`data-execution="${rows[0].id}"[\\s\\S]*?</tr>`).exec(oldest)![0];
  assert.match(row, /badge-completed">COMPLETED</);
  assert.match(row, /data-count="sent">0</);
  assert.match(row, /data-count="failed">1</);
  assert.match(first.html, /id="stats-title"/);
  const second = await v.get(nextLink(first.html)!);
  assert.doesNotMatch(second.html, /id="stats-title"/);
  assert.match(
    second.html,
    /The statistics are on <a href="\/dashboard\/workflows\/[0-9a-f-]{36}">the first page<\/a>/,
  );
  const garbage = await v.get(`/dashboard/workflows/${workflow.id}?after=garbage`);
  assert.deepEqual(executionIds(garbage.html), executionIds(first.html));
});

dbTest("the statistics card shows what GET /api/v1/workflows/{id} computes", async () => {
  const { v, deps, team, create, api } = await workflowFixture();
  const workflow = await create();
  const rows = await insertExecutions(deps, team.id, workflow.id, 4);
  await deps.sql`insert into workflow_step_runs ${
    deps.sql(rows.map((r, i) => ({
      execution_id: r.id,
      step_order: 2,
      workflow_id: workflow.id,
      channel_type: "sms",
      status: i === 0 ? "FAILED" : "SENT",
      cost_micros: i === 0 ? 0 : 7_500,
    })))
  }`;
  const stats = (await api("GET", `/workflows/${workflow.id}`)).body;
  assert.equal(stats.totals.total_sent, 3);
  const page = await v.get(`/dashboard/workflows/${workflow.id}`);
  const card = /id="statistics"[\s\S]*?<\/section>/.exec(page.html)![0];
  assert.match(card, new RegExp(`badge-${stats.status.toLowerCase()}">${stats.status}<`));
  assert.match(card, new RegExp(`Executions finished: ${stats.progress.processed} of ${stats.progress.total}`));
  assert.match(card, new RegExp(`data-total="sent">${stats.totals.total_sent}<`));
  assert.match(card, new RegExp(`data-total="failed">${stats.totals.total_failed}<`));
  assert.match(card, new RegExp(`${stats.totals.overall_success_rate}%`));
  const sms = /data-channel="sms"[\s\S]*?<\/tr>/.exec(card)![0];
  assert.match(sms, new RegExp(`data-count="sent">${stats.channels.sms.sent}<`));
  assert.match(sms, new RegExp(`${stats.channels.sms.success_rate}% succeeded`));
  assert.equal(stats.channels.sms.estimated_cost, 0.0225);
  assert.match(sms, /\$0\.0225/);
  // The email step has not run: its channel is listed with nothing yet, as the API lists it.
  assert.match(card, /data-channel="email"/);
});

dbTest("another team's workflow is 404 on every page and action, and stays as it was", async () => {
  const { v, deps, api, create } = await workflowFixture("owner");
  const mine = await create();
  const { team: other } = await testTeam(deps);
  await stepTemplates(deps, other.id);
  const [theirs] = await deps.sql<{ id: string }[]>`
    insert into workflows (team_id, name, event_type, is_active) values (${other.id}, 'Theirs', 'x', false)
    returning id`;
  await deps.sql`insert into workflow_steps (workflow_id, step_order, channel_type, step_name, configuration)
    values (${theirs.id}, 1, 'email', 'One', ${deps.sql.json({ template_id: "welcome", delay_minutes: 0 })})`;
  const page = await v.get(`/dashboard/workflows/${mine.id}`);
  const version = versionOf(page.html);
  const step = stepFields({ channel: "email", template: "welcome", delay: "9" });
  for (const id of [theirs.id, "not-a-uuid", crypto.randomUUID()]) {
    const base = `/dashboard/workflows/${id}`;
    assert.equal((await v.get(base)).status, 404, base);
    for (const action of ["activate", "deactivate", "steps", "steps/1", "steps/1/delete"]) {
      const res = await v.post(`${base}/${action}`, { version, ...step });
      assert.equal(res.status, 404, `${base}/${action}`);
      assert.match(res.html, /Workflow not found/);
    }
  }
  const [row] = await deps.sql`select is_active from workflows where id = ${theirs.id}`;
  assert.equal(row.is_active, false);
  const steps = await deps.sql`select configuration from workflow_steps where workflow_id = ${theirs.id}`;
  assert.deepEqual(steps.map((s) => s.configuration.delay_minutes), [0]);
  assert.deepEqual(listed((await v.get("/dashboard/workflows")).html), [mine.id]);
  assert.equal((await api("GET", `/workflows/${mine.id}`)).status, 200);
});

dbTest("a post without the session's token (or from another site) is refused and changes nothing", async () => {
  const { v, api, create } = await workflowFixture();
  const workflow = await create({ is_active: false });
  const page = await v.get(`/dashboard/workflows/${workflow.id}`);
  const version = versionOf(page.html);
  const forged = await v.post(`/dashboard/workflows/${workflow.id}/activate`, { _csrf: "forged", version });
  assert.equal(forged.status, 403);
  assert.match(forged.html, /did not come from the dashboard/);
  const crossSite = await v.post(`/dashboard/workflows/${workflow.id}/activate`, { version }, {
    Origin: "https://evil.example",
    "Sec-Fetch-Site": "cross-site",
  });
  assert.equal(crossSite.status, 403);
  const create403 = await v.post("/dashboard/workflows", {
    _csrf: "forged",
    name: "Forged",
    event_type: "x",
    ...stepFields({ channel: "email", template: "welcome", delay: "0" }),
  });
  assert.equal(create403.status, 403);
  const list = (await api("GET", "/workflows")).body;
  assert.equal(list.total, 1);
  assert.equal(list.workflows[0].is_active, false);
});

dbTest("a signed-out visitor is sent to sign in from the workflow pages", async () => {
  const f = await dashboardFixture();
  const res = await f.visitor().get("/dashboard/workflows");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/dashboard/sign-in");
});
