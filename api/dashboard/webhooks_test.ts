import assert from "node:assert/strict";
import type { Deps } from "../../shared/deps.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import { newEvent, packJobs } from "../../shared/webhook_events.ts";
import { newWebhookSecret } from "../../shared/webhook_signing.ts";
import { deliverWebhooks } from "../../worker/webhooks.ts";
import { startWorker } from "../../worker/queue.ts";
import { createEndpoint } from "../webhooks/queries.ts";
import { dashboardFixture, testUser } from "./testing.ts";

/** A receiver on loopback answering `status` (changeable), and the webhook-id of each delivery it got. */
function startReceiver() {
  const state = { status: 500, ids: [] as string[] };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    await req.body?.cancel();
    state.ids.push(req.headers.get("webhook-id") ?? "");
    return new Response(null, { status: state.status });
  });
  return { state, url: `http://127.0.0.1:${server.addr.port}/hook`, close: () => server.shutdown() };
}

/**
 * A team with an endpoint on a loopback receiver and the worker running (loopback allowed; automatic
 * retries put off for hours, so that only the dashboard's retry sends again).
 */
async function webhookFixture() {
  const f = await dashboardFixture({ WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_SCALE: 1000 });
  startWorker(f.deps);
  const receiver = startReceiver();
  const endpoint = await createEndpoint(f.deps.sql, f.team.id, {
    url: receiver.url,
    events: null,
    secret: newWebhookSecret(),
  });
  return { ...f, receiver, endpoint };
}

/** Delivers one event to the endpoint through the worker's delivery job; the event's id. */
async function deliverOnce(deps: Deps, teamId: string, endpointId: string): Promise<string> {
  const event = newEvent("message.sent", { message_id: `msg_${crypto.randomUUID()}` }, deps.now());
  const { jobs } = packJobs(teamId, [{ endpoint_id: endpointId, event }], 1, deps.now());
  await deliverWebhooks(deps, jobs[0]);
  return event.id;
}

async function attemptsOf(deps: Deps, eventId: string) {
  return await deps.sql<{ id: string; status: string; attempt: number }[]>`
    select id, status, attempt from webhook_attempts where event_id = ${eventId} order by id`;
}

dbTest("the webhooks page lists the team's endpoints, each with its deliveries", async () => {
  const f = await webhookFixture();
  try {
    f.receiver.state.status = 204;
    const eventId = await deliverOnce(f.deps, f.team.id, f.endpoint.id);
    const v = f.visitor();
    await v.signIn(f.member.email);
    const list = await v.get("/dashboard/webhooks");
    assert.equal(list.status, 200);
    assert.ok(list.html.includes(`href="/dashboard/webhooks/${f.endpoint.id}"`));
    assert.ok(list.html.includes(f.receiver.url));
    const page = await v.get(`/dashboard/webhooks/${f.endpoint.id}`);
    assert.equal(page.status, 200);
    assert.ok(page.html.includes(eventId));
    assert.match(page.html, /badge-succeeded/);
    assert.match(page.html, /HTTP 204/);
    assert.ok(!page.html.includes("Retry now"), "nothing to retry");
  } finally {
    await f.receiver.close();
  }
});

dbTest("a failed delivery is sent again from the dashboard through the delivery job, and delivered", async () => {
  const f = await webhookFixture();
  try {
    const eventId = await deliverOnce(f.deps, f.team.id, f.endpoint.id);
    const [failed] = await attemptsOf(f.deps, eventId);
    assert.equal(failed.status, "failed");
    const v = f.visitor();
    await v.signIn(f.member.email);
    const page = await v.get(`/dashboard/webhooks/${f.endpoint.id}`);
    assert.match(page.html, /HTTP 500/);
    const action = `/dashboard/webhooks/${f.endpoint.id}/deliveries/${failed.id}/retry`;
    assert.ok(page.html.includes(`action="${action}"`));

    f.receiver.state.status = 200;
    const retried = await v.post(action);
    assert.equal(retried.status, 303);
    assert.equal(retried.headers.get("location"), `/dashboard/webhooks/${f.endpoint.id}?retried=${eventId}`);
    const deadline = Date.now() + 30_000;
    while ((await attemptsOf(f.deps, eventId)).length < 2 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
    }
    const attempts = await attemptsOf(f.deps, eventId);
    assert.deepEqual(attempts.map((a) => [a.attempt, a.status]), [[1, "failed"], [2, "succeeded"]]);
    assert.deepEqual(f.receiver.state.ids, [eventId, eventId], "the same event, so receivers can deduplicate");

    const after = await v.get(`/dashboard/webhooks/${f.endpoint.id}?retried=${eventId}`);
    assert.match(after.html, /is on its way again/);
    assert.ok(!after.html.includes("Retry now"), "a delivered event offers no retry");
    const again = await v.post(action);
    assert.equal(again.status, 409);
    assert.match(again.html, /delivered by a later attempt/);
  } finally {
    await f.receiver.close();
  }
});

dbTest("a turned-off endpoint is turned on again before its deliveries can be retried", async () => {
  const f = await webhookFixture();
  try {
    f.receiver.state.status = 410;
    const eventId = await deliverOnce(f.deps, f.team.id, f.endpoint.id);
    const [gone] = await attemptsOf(f.deps, eventId);
    const v = f.visitor();
    await v.signIn(f.owner.email);
    const page = await v.get(`/dashboard/webhooks/${f.endpoint.id}`);
    assert.match(page.html, /off: it answered 410 Gone/);
    assert.ok(!page.html.includes("Retry now"));
    const refused = await v.post(`/dashboard/webhooks/${f.endpoint.id}/deliveries/${gone.id}/retry`);
    assert.equal(refused.status, 409);
    assert.match(refused.html, /turn it on again/);
    const enabled = await v.post(`/dashboard/webhooks/${f.endpoint.id}/enable`);
    assert.equal(enabled.status, 303);
    const [row] = await f.deps
      .sql`select is_active, disabled_reason from webhook_endpoints where id = ${f.endpoint.id}`;
    assert.deepEqual({ ...row }, { is_active: true, disabled_reason: null });
    assert.ok((await v.get(`/dashboard/webhooks/${f.endpoint.id}`)).html.includes("Retry now"));
  } finally {
    await f.receiver.close();
  }
});

dbTest("an owner rotates the signing secret (shown once, the old one kept a day); a member may not", async () => {
  const f = await webhookFixture();
  try {
    const secretOf = async () =>
      (await f.deps.sql`select secret, previous_secret from webhook_endpoints where id = ${f.endpoint.id}`)[0];
    const m = f.visitor();
    await m.signIn(f.member.email);
    const memberPage = await m.get(`/dashboard/webhooks/${f.endpoint.id}`);
    assert.ok(!memberPage.html.includes("/rotate-secret"));
    assert.equal((await m.post(`/dashboard/webhooks/${f.endpoint.id}/rotate-secret`)).status, 403);
    assert.equal((await secretOf()).secret, f.endpoint.secret);

    const o = f.visitor();
    await o.signIn(f.owner.email);
    const rotated = await o.post(`/dashboard/webhooks/${f.endpoint.id}/rotate-secret`);
    assert.equal(rotated.status, 200);
    const shown = /id="new-secret">([^<]+)</.exec(rotated.html)?.[1];
    const stored = await secretOf();
    assert.equal(shown, stored.secret);
    assert.notEqual(stored.secret, f.endpoint.secret);
    assert.equal(stored.previous_secret, f.endpoint.secret);
    assert.ok(!(await o.get(`/dashboard/webhooks/${f.endpoint.id}`)).html.includes(stored.secret));
  } finally {
    await f.receiver.close();
  }
});

dbTest("one team never sees or acts on another team's endpoints: every page and action is 404", async () => {
  const f = await webhookFixture();
  try {
    const eventId = await deliverOnce(f.deps, f.team.id, f.endpoint.id);
    const [failed] = await attemptsOf(f.deps, eventId);
    const other = await testTeam(f.deps);
    const stranger = await testUser(f.deps, other.team.id, "owner");
    const v = f.visitor();
    await v.signIn(stranger.email);
    const list = await v.get("/dashboard/webhooks");
    assert.ok(!list.html.includes(f.endpoint.id) && !list.html.includes(f.receiver.url));
    assert.match(list.html, /No webhook endpoints yet/);
    assert.match(list.html, /POST \/api\/v1\/webhooks/);
    const base = `/dashboard/webhooks/${f.endpoint.id}`;
    assert.equal((await v.get(base)).status, 404);
    assert.equal((await v.post(`${base}/deliveries/${failed.id}/retry`)).status, 404);
    assert.equal((await v.post(`${base}/rotate-secret`)).status, 404);
    assert.equal((await v.post(`${base}/enable`)).status, 404);
    assert.equal((await v.get("/dashboard/webhooks/not-a-uuid")).status, 404);
    const [row] = await f.deps.sql`select secret from webhook_endpoints where id = ${f.endpoint.id}`;
    assert.equal(row.secret, f.endpoint.secret);
    assert.equal((await attemptsOf(f.deps, eventId)).length, 1);
  } finally {
    await f.receiver.close();
  }
});

dbTest("a forged retry or rotation (another site, or no forgery token) is refused with 403", async () => {
  const f = await webhookFixture();
  try {
    const eventId = await deliverOnce(f.deps, f.team.id, f.endpoint.id);
    const [failed] = await attemptsOf(f.deps, eventId);
    const v = f.visitor();
    await v.signIn(f.owner.email);
    const crossSite = { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" };
    const base = `/dashboard/webhooks/${f.endpoint.id}`;
    assert.equal((await v.post(`${base}/deliveries/${failed.id}/retry`, {}, crossSite)).status, 403);
    assert.equal((await v.post(`${base}/rotate-secret`, {}, crossSite)).status, 403);
    for (const action of [`${base}/deliveries/${failed.id}/retry`, `${base}/rotate-secret`]) {
      // The refusal page carries the session's token again: forget it before each post.
      v.csrf = undefined;
      assert.equal((await v.post(action)).status, 403, action);
    }
    const [row] = await f.deps.sql`select secret from webhook_endpoints where id = ${f.endpoint.id}`;
    assert.equal(row.secret, f.endpoint.secret);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await attemptsOf(f.deps, eventId)).length, 1);
  } finally {
    await f.receiver.close();
  }
});
