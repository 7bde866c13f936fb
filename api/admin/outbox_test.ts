import assert from "node:assert/strict";
import { monotonicFactory } from "ulid";
import { createService } from "../../main.ts";
import type { Deps } from "../../shared/deps.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { dbTest, jsonRequest, randomEmail, testDeps, testTeam } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };
const nextId = monotonicFactory();

async function send(deps: Deps, teamId: string, channel: Channel, to: string, text: string, triggerId?: string) {
  await deps.providers.outbox.send({
    id: nextId(),
    teamId,
    channel,
    to,
    subject: channel === "email" ? `Subject ${text}` : undefined,
    html: channel === "email" ? `<p>${text}</p>` : undefined,
    title: channel === "push" ? `Title ${text}` : undefined,
    text,
    triggerId,
  });
}

async function setup() {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  return { deps, team, app: createService(deps) };
}

dbTest("GET /admin/v1/outbox lists recorded messages newest first with their fields", async () => {
  const { app, deps, team } = await setup();
  const email = randomEmail();
  const trigger = crypto.randomUUID();
  await send(deps, team.id, "email", email, "first", trigger);
  await send(deps, team.id, "sms", "+33612345678", "second");
  await send(deps, team.id, "push", "device-token-abc", "third");

  const res = await app.request(`/admin/v1/outbox?team_id=${team.id}`, { headers: TOKEN });
  assert.equal(res.status, 200);
  const { messages } = await res.json();
  assert.deepEqual(messages.map((m: { body: string }) => m.body), ["third", "second", "<p>first</p>"]);
  const [push, , mail] = messages;
  assert.deepEqual({ ...mail, id: undefined, created_at: undefined }, {
    id: undefined,
    team_id: team.id,
    channel: "email",
    to: email,
    subject: "Subject first",
    body: "<p>first</p>",
    trigger_id: trigger,
    created_at: undefined,
  });
  assert.equal(push.subject, "Title third");
  assert.match(mail.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

dbTest("GET /admin/v1/outbox filters by recipient, channel and team, and honours limit", async () => {
  const { app, deps, team } = await setup();
  const { team: other } = await testTeam(deps);
  const email = randomEmail();
  await send(deps, team.id, "email", email, "a");
  await send(deps, team.id, "email", randomEmail(), "b");
  await send(deps, team.id, "sms", "+15550001111", "c");
  await send(deps, other.id, "email", email, "d");
  await send(deps, team.id, "email", email, "e");

  const read = async (query: string) => {
    const res = await app.request(`/admin/v1/outbox?${query}`, { headers: TOKEN });
    assert.equal(res.status, 200, query);
    return (await res.json()).messages.map((m: { body: string }) => m.body.replace(/<\/?p>/g, ""));
  };
  assert.deepEqual(await read(`to=${encodeURIComponent(email)}`), ["e", "d", "a"]);
  assert.deepEqual(await read(`to=${encodeURIComponent(email)}&team_id=${team.id}`), ["e", "a"]);
  assert.deepEqual(await read(`team_id=${team.id}&channel=sms`), ["c"]);
  assert.deepEqual(await read(`team_id=${team.id}&channel=email&limit=2`), ["e", "b"]);
  assert.deepEqual(await read(`team_id=${other.id}`), ["d"]);
});

dbTest("GET /admin/v1/outbox refuses a bad channel, team id or limit with 400", async () => {
  const { app } = await setup();
  for (const query of ["channel=fax", "team_id=abc", "limit=0", "limit=1001", "limit=ten"]) {
    const res = await app.request(`/admin/v1/outbox?${query}`, { headers: TOKEN });
    assert.equal(res.status, 400, query);
    assert.equal((await res.json()).statusCode, 400);
  }
});

dbTest("GET /admin/v1/outbox returns at most 50 messages unless a limit is given", async () => {
  const { app, deps, team } = await setup();
  for (let i = 0; i < 55; i++) await send(deps, team.id, "sms", "+15550002222", `m${i}`);
  const res = await app.request(`/admin/v1/outbox?team_id=${team.id}`, { headers: TOKEN });
  const { messages } = await res.json();
  assert.equal(messages.length, 50);
  assert.equal(messages[0].body, "m54");
  const all = await app.request(`/admin/v1/outbox?team_id=${team.id}&limit=1000`, { headers: TOKEN });
  assert.equal((await all.json()).messages.length, 55);
});

dbTest("DELETE /admin/v1/outbox clears the matching messages, or all of them", async () => {
  const { app, deps, team } = await setup();
  const { team: other } = await testTeam(deps);
  await send(deps, team.id, "email", randomEmail(), "a");
  await send(deps, team.id, "sms", "+15550003333", "b");
  await send(deps, other.id, "sms", "+15550003333", "c");

  const some = await app.request(
    `/admin/v1/outbox?team_id=${team.id}&channel=sms`,
    jsonRequest("DELETE", undefined, TOKEN),
  );
  assert.equal(some.status, 200);
  assert.deepEqual(await some.json(), { deleted: 1 });
  const left = await app.request(`/admin/v1/outbox?team_id=${team.id}`, { headers: TOKEN });
  assert.deepEqual((await left.json()).messages.map((m: { channel: string }) => m.channel), ["email"]);

  const all = await app.request("/admin/v1/outbox", { method: "DELETE", headers: TOKEN });
  assert.equal(all.status, 200);
  assert.ok((await all.json()).deleted >= 2);
  // Other tests of the process may record messages meanwhile: look at this test's teams only.
  for (const id of [team.id, other.id]) {
    const none = await app.request(`/admin/v1/outbox?team_id=${id}`, { headers: TOKEN });
    assert.deepEqual(await none.json(), { messages: [] });
  }
  const again = await app.request(`/admin/v1/outbox?team_id=${team.id}`, { method: "DELETE", headers: TOKEN });
  assert.deepEqual(await again.json(), { deleted: 0 });
});

dbTest(
  "a message the worker sent is in the outbox from its own row; a clear takes it out and keeps its record",
  async () => {
    const f = await sendingFixture();
    const to = randomEmail();
    const { trigger_id } = await f.finished(
      await f.post("/api/v1/messages/send", {
        recipient_type: "direct_email",
        direct_email: to,
        subject: "Hello {{name}}",
        content: "<p>Hi {{name}}</p>",
        variables: { name: "Ann" },
      }),
    );
    await send(f.deps, f.team.id, "sms", "+15550004444", "kept apart");
    const [message] = await f.deps.sql`select id from messages where trigger_id = ${trigger_id}`;
    const [entry] = await f.deps.sql`select id from outbox where team_id = ${f.team.id}`;
    assert.ok(message && entry, "one copy in its message row, one kept apart");

    const listed = await f.app.request(`/admin/v1/outbox?team_id=${f.team.id}`, { headers: TOKEN });
    const { messages } = await listed.json();
    assert.deepEqual(messages.map((m: { id: string }) => m.id), [entry.id, message.id], "newest first");
    assert.deepEqual({ ...messages[1], created_at: undefined }, {
      id: message.id,
      team_id: f.team.id,
      channel: "email",
      to,
      subject: "Hello Ann",
      body: "<p>Hi Ann</p>",
      trigger_id,
      created_at: undefined,
    });
    const byAddress = await f.app.request(`/admin/v1/outbox?to=${encodeURIComponent(to)}`, { headers: TOKEN });
    assert.deepEqual((await byAddress.json()).messages.map((m: { id: string }) => m.id), [message.id]);

    const cleared = await f.app.request(`/admin/v1/outbox?team_id=${f.team.id}`, { method: "DELETE", headers: TOKEN });
    assert.deepEqual(await cleared.json(), { deleted: 2 });
    const none = await f.app.request(`/admin/v1/outbox?team_id=${f.team.id}`, { headers: TOKEN });
    assert.deepEqual(await none.json(), { messages: [] });
    const [record] = await f.deps.sql`
    select status, provider_message_id, in_outbox, outbox_subject, outbox_body from messages where id = ${message.id}`;
    assert.deepEqual({ ...record }, {
      status: "sent",
      provider_message_id: `outbox_${message.id}`,
      in_outbox: false,
      outbox_subject: null,
      outbox_body: null,
    });
  },
);

dbTest("the outbox routes need the admin token", async () => {
  const { app } = await setup();
  assert.equal((await app.request("/admin/v1/outbox")).status, 401);
  assert.equal((await app.request("/admin/v1/outbox", { method: "DELETE" })).status, 401);
});
