import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { findIdentity, isVerifiedSender } from "../../shared/identities.ts";
import { findSegment } from "../../shared/segments.ts";
import { findTemplate } from "../../shared/templates.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };

async function setup() {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  return { deps, team, app: createService(deps) };
}

dbTest("PUT /admin/v1/teams/{id}/templates/{channel}/{key} stores each channel's template", async () => {
  const { app, deps, team } = await setup();
  const bodies = {
    email: { subject: "Hi {{contact_first_name}}", html: "<p>Hi</p>", text: "Hi" },
    sms: { body: "Code {{code}}", country_variations: { fr: "Code {{code}} (fr)" }, status: "pending" },
    whatsapp: { body: "Hello {{1}}", category: "UTILITY" },
    push: { title: "Hey", body: "Open the app" },
  };
  for (const [channel, body] of Object.entries(bodies)) {
    const res = await app.request(
      `/admin/v1/teams/${team.id}/templates/${channel}/greeting`,
      jsonRequest("PUT", body, TOKEN),
    );
    assert.equal(res.status, 200, channel);
    const template = await res.json();
    assert.match(template.id, /^[0-9a-f-]{36}$/);
    assert.equal(template.channel, channel);
    assert.equal(template.key, "greeting");
    assert.equal(template.team_id, team.id);
    const stored = await findTemplate(deps.sql, team.id, channel as "email", "greeting");
    assert.equal(stored?.id, template.id);
  }
  const sms = await findTemplate(deps.sql, team.id, "sms", "greeting");
  assert.deepEqual(sms?.country_variations, { FR: "Code {{code}} (fr)" });
  assert.equal(sms?.status, "pending");
  const whatsapp = await findTemplate(deps.sql, team.id, "whatsapp", "greeting");
  assert.equal(whatsapp?.category, "UTILITY");
  assert.equal(whatsapp?.status, "approved");
  const push = await findTemplate(deps.sql, team.id, "push", "greeting");
  assert.deepEqual([push?.title, push?.body], ["Hey", "Open the app"]);
});

dbTest("a template upsert keeps its id and replaces its content", async () => {
  const { app, team } = await setup();
  const path = `/admin/v1/teams/${team.id}/templates/email/welcome`;
  const first = await (await app.request(path, jsonRequest("PUT", { subject: "A", html: "<p>A</p>" }, TOKEN))).json();
  const res = await app.request(path, jsonRequest("PUT", { subject: "B", html: "<p>B</p>", text: "B" }, TOKEN));
  assert.equal(res.status, 200);
  const second = await res.json();
  assert.equal(second.id, first.id);
  assert.deepEqual([second.subject, second.html, second.text], ["B", "<p>B</p>", "B"]);
  assert.match(second.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

dbTest("a template body with fields of another channel or missing fields is 400", async () => {
  const { app, deps, team } = await setup();
  const cases: [string, unknown, string][] = [
    ["email", { subject: "S", html: "<p/>", body: "x" }, "body has unknown properties: body"],
    ["email", { subject: "S" }, "html should not be empty"],
    ["sms", { body: "x", category: "UTILITY" }, "body has unknown properties: category"],
    ["sms", { body: "x", country_variations: { France: "y" } }, "country_variations keys must be ISO"],
    ["whatsapp", { body: "x" }, "category should not be empty"],
    ["whatsapp", { body: "x", category: "PROMO" }, "category must be one of: MARKETING, UTILITY, AUTHENTICATION"],
    ["push", { title: "t", body: "b", html: "<p/>" }, "body has unknown properties: html"],
    ["push", { title: "t", body: "b", status: "rejected" }, "status must be one of: approved, pending"],
  ];
  for (const [channel, body, message] of cases) {
    const res = await app.request(
      `/admin/v1/teams/${team.id}/templates/${channel}/bad`,
      jsonRequest("PUT", body, TOKEN),
    );
    assert.equal(res.status, 400, `${channel} ${JSON.stringify(body)}`);
    const answer = await res.json();
    assert.ok(answer.message.some((m: string) => m.startsWith(message)), JSON.stringify(answer.message));
    assert.equal(await findTemplate(deps.sql, team.id, channel as "sms", "bad"), undefined);
  }
  const fax = await app.request(
    `/admin/v1/teams/${team.id}/templates/fax/bad`,
    jsonRequest("PUT", { body: "x" }, TOKEN),
  );
  assert.equal(fax.status, 400);
  assert.deepEqual((await fax.json()).message, ["channel must be one of: email, sms, whatsapp, push"]);
});

dbTest("template, identity, domain and segment routes of an unknown team are 404", async () => {
  const { app } = await setup();
  const id = crypto.randomUUID();
  const requests: [string, unknown][] = [
    [`/admin/v1/teams/${id}/templates/push/k`, { title: "t", body: "b" }],
    [`/admin/v1/teams/${id}/identities/sms/main`, { from: "ACME" }],
    [`/admin/v1/teams/${id}/domains/example.org`, { verified: true }],
    [`/admin/v1/teams/${id}/segments/vip`, { name: "VIP", filter: {} }],
    ["/admin/v1/teams/nope/segments/vip", { name: "VIP", filter: {} }],
  ];
  for (const [path, body] of requests) {
    const res = await app.request(path, jsonRequest("PUT", body, TOKEN));
    assert.equal(res.status, 404, path);
    assert.equal((await res.json()).message, "Team not found");
  }
});

dbTest("PUT /admin/v1/teams/{id}/identities/{channel}/{id} stores a sender identity", async () => {
  const { app, deps, team } = await setup();
  const res = await app.request(
    `/admin/v1/teams/${team.id}/identities/sms/france`,
    jsonRequest("PUT", { from: "ACME", countries: ["fr", "BE"] }, TOKEN),
  );
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    id: "france",
    team_id: team.id,
    channel: "sms",
    from: "ACME",
    name: null,
    countries: ["FR", "BE"],
    is_default: false,
  });
  assert.equal((await findIdentity(deps.sql, team.id, "sms", { country: "FR" }))?.from_address, "ACME");
  assert.notEqual((await findIdentity(deps.sql, team.id, "sms", { country: "US" }))?.from_address, "ACME");

  const email = await app.request(
    `/admin/v1/teams/${team.id}/identities/email/support`,
    jsonRequest("PUT", { from: "help@acme.test", name: "ACME Help", is_default: true }, TOKEN),
  );
  assert.equal(email.status, 200);
  const found = await findIdentity(deps.sql, team.id, "email");
  assert.deepEqual([found?.id, found?.from_address, found?.name], ["support", "help@acme.test", "ACME Help"]);
});

dbTest("an identity with a bad channel, a bad email or a missing from is 400", async () => {
  const { app, team } = await setup();
  const cases: [string, unknown, string][] = [
    ["fax/x", { from: "ACME" }, "channel must be one of: email, sms, whatsapp, push"],
    ["email/x", { from: "not-an-address" }, "from must be an email"],
    ["sms/x", { name: "ACME" }, "from should not be empty"],
    ["sms/x", { from: "ACME", countries: ["France"] }, "countries must be ISO 3166-1 alpha-2 country codes"],
  ];
  for (const [path, body, message] of cases) {
    const res = await app.request(`/admin/v1/teams/${team.id}/identities/${path}`, jsonRequest("PUT", body, TOKEN));
    assert.equal(res.status, 400, path);
    assert.deepEqual((await res.json()).message, [message]);
  }
});

dbTest("PUT /admin/v1/teams/{id}/domains/{domain} marks the domain verified and unverified", async () => {
  const { app, deps, team } = await setup();
  const path = `/admin/v1/teams/${team.id}/domains/Mail.Acme.test`;
  const res = await app.request(path, jsonRequest("PUT", { verified: true }, TOKEN));
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { domain: "mail.acme.test", verified: true });
  assert.equal(await isVerifiedSender(deps.sql, team.id, "news@mail.acme.test"), true);
  await app.request(path, jsonRequest("PUT", { verified: false }, TOKEN));
  assert.equal(await isVerifiedSender(deps.sql, team.id, "news@mail.acme.test"), false);

  const bad = await app.request(`/admin/v1/teams/${team.id}/domains/not_a_domain`, jsonRequest("PUT", {}, TOKEN));
  assert.equal(bad.status, 400);
});

dbTest("PUT /admin/v1/teams/{id}/segments/{id} stores a segment that findSegment returns", async () => {
  const { app, deps, team } = await setup();
  const path = `/admin/v1/teams/${team.id}/segments/vip`;
  const filter = { tags_all: ["vip", "paid"], tags_any: ["fr", "be"], is_active: true };
  const res = await app.request(path, jsonRequest("PUT", { name: "VIP", filter }, TOKEN));
  assert.equal(res.status, 200);
  const segment = await res.json();
  assert.deepEqual([segment.id, segment.team_id, segment.name, segment.filter], ["vip", team.id, "VIP", filter]);
  assert.deepEqual((await findSegment(deps.sql, team.id, "vip"))?.filter, filter);

  const replaced = await app.request(path, jsonRequest("PUT", { name: "VIP 2", filter: { tags_any: ["x"] } }, TOKEN));
  assert.equal((await replaced.json()).name, "VIP 2");
  const stored = await findSegment(deps.sql, team.id, "vip");
  assert.deepEqual([stored?.name, stored?.filter], ["VIP 2", { tags_any: ["x"] }]);

  const bad = await app.request(path, jsonRequest("PUT", { name: "X", filter: { tags: ["a"] } }, TOKEN));
  assert.equal(bad.status, 400);
  assert.deepEqual((await bad.json()).message, ["filter has unknown properties: tags"]);
  const noName = await app.request(path, jsonRequest("PUT", { filter: {} }, TOKEN));
  assert.deepEqual((await noName.json()).message, ["name should not be empty"]);
  // Bounded as a send's tags: the filter travels in every job of a send to the segment.
  for (
    const [filter, line] of [
      [{ tags_all: ["x".repeat(256)] }, "filter.tags_all.0 must be at most 255 characters"],
      [
        { tags_any: Array.from({ length: 101 }, (_, i) => `t${i}`) },
        "filter.tags_any must contain at most 100 elements",
      ],
    ] as const
  ) {
    const long = await app.request(path, jsonRequest("PUT", { name: "X", filter }, TOKEN));
    assert.equal(long.status, 400);
    assert.deepEqual((await long.json()).message, [line]);
  }
});

dbTest("a send right after an admin change of a template, identity or domain sees the change", async () => {
  const f = await sendingFixture();
  const admin = (path: string, body: unknown) =>
    f.app.request(`/admin/v1/teams/${f.team.id}${path}`, jsonRequest("PUT", body, TOKEN));
  const sms = (extra: Record<string, unknown> = {}) =>
    f.post("/api/v1/sms/send", {
      template_key: "fresh",
      recipient_type: "direct_sms",
      direct_phone: "+14155550123",
      ...extra,
    }, f.keys.test);
  // Each refusal below is cached by a process that keeps look-ups for a few seconds.
  assert.equal((await (await sms()).json()).message, "Template 'fresh' not found for team");
  assert.equal((await admin("/templates/sms/fresh", { body: "v1", status: "pending" })).status, 200);
  assert.equal((await (await sms()).json()).message, "Template 'fresh' is not approved");
  assert.equal((await admin("/templates/sms/fresh", { body: "v1" })).status, 200);
  const first = await f.finished(await sms());
  assert.equal(first.trigger.status, "completed");
  assert.equal((await admin("/templates/sms/fresh", { body: "v2" })).status, 200);
  const second = await f.finished(await sms());
  assert.deepEqual((await f.outbox(second.trigger_id)).map((m) => m.body), ["v2"]);

  assert.equal((await sms({ sms_identity_id: "uk" })).status, 404);
  assert.equal((await admin("/identities/sms/uk", { from: "ACME" })).status, 200);
  assert.equal((await sms({ sms_identity_id: "uk" })).status, 201);

  const email = () =>
    f.post("/api/v1/messages/send", {
      recipient_type: "direct_email",
      direct_email: "ann@example.com",
      subject: "S",
      content: "C",
      from_email: "billing@brand.test",
    }, f.keys.test);
  assert.equal((await email()).status, 400);
  assert.equal((await admin("/domains/brand.test", { verified: true })).status, 200);
  assert.equal((await email()).status, 201);
});

dbTest("an SMS template with empty country_variations is 400 (it would serve no country)", async () => {
  const { app, team } = await setup();
  const res = await app.request(
    `/admin/v1/teams/${team.id}/templates/sms/none`,
    jsonRequest("PUT", { body: "Hi", country_variations: {} }, TOKEN),
  );
  assert.equal(res.status, 400);
  assert.deepEqual((await res.json()).message, ["country_variations should not be empty"]);
});

dbTest(
  "concurrent identity upserts that each make another identity the default all succeed, one default left",
  async () => {
    const { app, deps, team } = await setup();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      app.request(
        `/admin/v1/teams/${team.id}/identities/sms/sender-${i}`,
        jsonRequest("PUT", { from: `ACME${i}`, is_default: true }, TOKEN),
      )));
    assert.deepEqual(answers.map((res) => res.status), Array(8).fill(200));
    const defaults = await deps.sql`
    select id from sender_identities where team_id = ${team.id} and channel = 'sms' and is_default`;
    assert.equal(defaults.length, 1);
  },
);
