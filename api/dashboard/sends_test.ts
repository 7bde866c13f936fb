import assert from "node:assert/strict";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";
import type { Deps } from "../../shared/deps.ts";
import { PROGRESS_SCRIPT_PATH } from "./assets.ts";
import { testUser, Visitor } from "./testing.ts";

/** The team's service and worker, with an owner and a member signed in to the dashboard. */
async function sendsFixture() {
  const f = await sendingFixture();
  const [owner, member] = await Promise.all([testUser(f.deps, f.team.id, "owner"), testUser(f.deps, f.team.id)]);
  const visitor = () => new Visitor(f.app);
  return { ...f, owner, member, visitor };
}

/** A trigger row written straight to Postgres, as the worker records one. */
async function triggerRow(
  deps: Deps,
  teamId: string,
  row: { status?: string; created_at?: Date; sent?: number } = {},
): Promise<string> {
  const id = crypto.randomUUID();
  const sent = row.sent ?? 1;
  await deps.sql`insert into triggers ${
    deps.sql({
      id,
      team_id: teamId,
      trigger_type: "email",
      status: row.status ?? "completed",
      total_contacts: sent,
      sent,
      created_at: row.created_at ?? new Date(),
    })
  }`;
  return id;
}

/** The trigger ids the sends list links to, top to bottom. */
function listedIds(html: string): string[] {
  return [...html.matchAll(/href="\/dashboard\/sends\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
}

dbTest("the sends page lists the team's sends newest first, each linking to its page", async () => {
  const f = await sendsFixture();
  const ids: string[] = [];
  for (const to of ["a@example.com", "b@example.com"]) {
    const res = await f.post("/api/v1/messages/send", {
      recipient_type: "direct_email",
      direct_email: to,
      subject: "S",
      content: "C",
    });
    ids.push((await f.finished(res)).trigger_id);
  }
  const v = f.visitor();
  await v.signIn(f.member.email);
  const page = await v.get("/dashboard/sends");
  assert.equal(page.status, 200);
  assert.deepEqual(listedIds(page.html), ids.reverse());
  assert.match(page.html, /<span class="badge badge-completed">completed<\/span>/);
  assert.match(page.html, /href="\/dashboard\/sends" aria-current="page"/);
});

dbTest("a fan-out's page shows its counts and executions, and its JSON is the API's trigger view", async () => {
  const f = await sendsFixture();
  for (let i = 0; i < 5; i++) await f.contact({ tags: ["news"] });
  const res = await f.post("/api/v1/messages/send", { recipient_type: "tag", tag: "news", subject: "S", content: "C" });
  const { trigger_id: id, trigger } = await f.finished(res);
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const page = await v.get(`/dashboard/sends/${id}`);
  assert.equal(page.status, 200);
  assert.match(page.html, /data-status="completed"/);
  assert.match(page.html, /<dd data-count="total_contacts">5<\/dd>/);
  assert.match(page.html, /<dd data-count="sent">5<\/dd>/);
  assert.match(page.html, /<tr key="[^"]+" data-execution="[0-9a-f-]{36}"><td data-label="Channel">email /);
  assert.ok(!page.html.includes(PROGRESS_SCRIPT_PATH), "a finished send needs no script");
  const json = await v.get(`/dashboard/sends/${id}/progress`);
  assert.equal(json.status, 200);
  const body = JSON.parse(json.html);
  const api = await (await f.get(`/api/v1/triggers/${id}`)).json();
  assert.equal(body.status, api.status);
  assert.deepEqual(body.summary, api.summary);
  assert.deepEqual(body.summary, trigger.summary);
  assert.equal(body.executions.length, 1);
  assert.equal(body.executions[0].sent, 5);
});

dbTest("a running send's page carries the progress script, served by the service", async () => {
  const f = await sendsFixture();
  const id = await triggerRow(f.deps, f.team.id, { status: "processing", sent: 0 });
  const v = f.visitor();
  await v.signIn(f.member.email);
  const page = await v.get(`/dashboard/sends/${id}`);
  assert.match(page.html, /data-status="processing"/);
  assert.ok(page.html.includes(`src="/dashboard${PROGRESS_SCRIPT_PATH}" defer></script>`));
  assert.ok(page.html.includes(`data-src="/dashboard/sends/${id}/progress"`));
  const script = await v.get(`/dashboard${PROGRESS_SCRIPT_PATH}`);
  assert.equal(script.status, 200);
  assert.match(script.headers.get("content-type") ?? "", /text\/javascript/);
  assert.match(script.headers.get("cache-control") ?? "", /immutable/);
  assert.match(script.html, /data-count/);
  const list = await v.get("/dashboard/sends");
  assert.match(list.html, /<span class="badge badge-processing">processing<\/span>/);
});

dbTest("the sends list pages by keyset: 50 a page, then the older ones", async () => {
  const f = await sendsFixture();
  const start = Date.now() - 3_600_000;
  const ids: string[] = [];
  // Two share each time: the id orders them.
  for (let i = 0; i < 53; i++) {
    ids.push(await triggerRow(f.deps, f.team.id, { created_at: new Date(start + (i >> 1)) }));
  }
  const v = f.visitor();
  await v.signIn(f.owner.email);
  const expected = ids.map((id, i) => ({ id, t: i >> 1 })).sort((a, b) => b.t - a.t || (b.id < a.id ? -1 : 1));
  const first = await v.get("/dashboard/sends");
  assert.deepEqual(listedIds(first.html), expected.slice(0, 50).map((e) => e.id));
  const older = /href="(\/dashboard\/sends\?after=[^"]+)" rel="next"/.exec(first.html)?.[1];
  assert.ok(older);
  const second = await v.get(older);
  assert.deepEqual(listedIds(second.html), expected.slice(50).map((e) => e.id));
  assert.ok(!second.html.includes('rel="next"'));
});

dbTest("one team never sees another team's sends: not listed, page and progress 404", async () => {
  const f = await sendsFixture();
  const theirs = await triggerRow(f.deps, f.team.id, { status: "processing" });
  const other = await testTeam(f.deps);
  const stranger = await testUser(f.deps, other.team.id, "owner");
  const v = f.visitor();
  await v.signIn(stranger.email);
  const list = await v.get("/dashboard/sends");
  assert.ok(!list.html.includes(theirs));
  assert.match(list.html, /No sends yet/);
  assert.match(list.html, /POST \/api\/v1\/messages\/send/);
  const page = await v.get(`/dashboard/sends/${theirs}`);
  assert.equal(page.status, 404);
  assert.match(page.html, /Send not found/);
  assert.equal((await v.get(`/dashboard/sends/${theirs}/progress`)).status, 404);
  assert.equal((await v.get("/dashboard/sends/not-a-uuid")).status, 404);
});

dbTest("the sends pages need a session: a signed-out visitor is sent to sign in", async () => {
  const f = await sendsFixture();
  const id = await triggerRow(f.deps, f.team.id);
  for (const path of ["/dashboard/sends", `/dashboard/sends/${id}`, `/dashboard/sends/${id}/progress`]) {
    const res = await f.visitor().get(path);
    assert.equal(res.status, 303, path);
    assert.equal(res.headers.get("location"), "/dashboard/sign-in");
  }
});
