import assert from "node:assert/strict";
import { createContacts } from "../../shared/contacts/bulk.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { dbTest, testTeam } from "../../shared/testing.ts";
import {
  allPages,
  dashboardFixture,
  insertMessages,
  nextLink,
  signedInFixture,
  testUser,
  type Visitor,
} from "./testing.ts";

/** The contact ids a page links to, in page order. */
function contactLinks(html: string): string[] {
  return [...html.matchAll(/href="\/dashboard\/contacts\/([0-9a-f-]{36})"/g)].map((m) => m[1]);
}

/** Polls an import's page until it is no longer running; its last HTML. */
async function finishedImport(v: Visitor, path: string): Promise<string> {
  for (;;) {
    const page = await v.get(path);
    assert.equal(page.status, 200);
    if (!page.html.includes('http-equiv="refresh"')) return page.html;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Uploads a CSV through the import form as a browser would (multipart, with the session's token). */
async function upload(
  v: Visitor,
  app: { request: (path: string, init: RequestInit) => Response | Promise<Response> },
  csv: string,
): Promise<Response> {
  const form = new FormData();
  form.set("_csrf", v.csrf!);
  form.set("file", new File([csv], "people.csv", { type: "text/csv" }));
  return await app.request("/dashboard/contacts/imports", {
    method: "POST",
    body: form,
    headers: { Cookie: v.cookie!, Origin: "http://localhost", "Sec-Fetch-Site": "same-origin" },
  });
}

async function someContacts(deps: Deps, teamId: string, n: number, prefix = "p") {
  const inputs = Array.from(
    { length: n },
    (_, i) => ({ email: `${prefix}${i}.${crypto.randomUUID().slice(0, 6)}@example.com` }),
  );
  return (await createContacts(deps.sql, teamId, inputs)).created;
}

dbTest("a team without contacts is told to import a CSV or use the API first", async () => {
  const { v } = await signedInFixture();
  const page = await v.get("/dashboard/contacts");
  assert.equal(page.status, 200);
  assert.match(page.html, /No contacts yet/);
  assert.match(page.html, /Import a CSV file below/);
  assert.match(page.html, /POST \/api\/v1\/contacts/);
  assert.match(page.html, /<a href="\/dashboard\/contacts" aria-current="page">Contacts<\/a>/);
  assert.match(page.html, /<a href="\/dashboard\/messages"\s*>Messages<\/a>/);
});

dbTest("the contacts list pages by keyset: every contact once, newest first, over several pages", async () => {
  const { deps, team, v } = await signedInFixture();
  const made = [];
  for (let i = 0; i < 3; i++) made.push(...await someContacts(deps, team.id, 45, `b${i}-`));
  const { ids, pages } = await allPages(v, "/dashboard/contacts", contactLinks);
  assert.equal(pages, 3);
  assert.equal(ids.length, 135);
  assert.equal(new Set(ids).size, 135);
  const [{ newest }] = await deps.sql`
    select array_agg(id::text order by created_at desc, id desc) as newest from contacts where team_id = ${team.id}`;
  assert.deepEqual(ids, newest);
  assert.ok(!(await v.get("/dashboard/contacts")).html.includes("First page"));
  assert.match((await v.get(`/dashboard/contacts?after=${ids[49]}`)).html, /First page/);
});

dbTest(
  "the contacts list finds by email, phone, name and external id, and filters by tag, active, unsubscribed",
  async () => {
    const { deps, team, v } = await signedInFixture();
    const ada = await createContact(deps.sql, team.id, {
      email: "ada.lovelace@example.com",
      first_name: "Ada",
      last_name: "Lovelace",
      external_id: "crm-1815",
      phone: "+447700900123",
      tags: ["vip", "uk"],
    });
    const bob = await createContact(deps.sql, team.id, { email: "bob@example.com", first_name: "Bob", tags: ["uk"] });
    const cy = await createContact(deps.sql, team.id, { email: "cy@example.com", is_active: false });
    await deps.sql`update contacts set is_unsubscribed = true where id = ${bob.id}`;
    const found = async (query: string) => contactLinks((await v.get(`/dashboard/contacts?${query}`)).html).sort();
    assert.deepEqual(await found("q=lovelace"), [ada.id]);
    assert.deepEqual(await found("q=LOVELACE%40example"), [ada.id]);
    assert.deepEqual(await found("q=Ada.Lovelace%40Example.com"), [ada.id]);
    assert.deepEqual(await found("q=da.lovelace%40example.com"), []);
    assert.deepEqual(await found("q=crm-18"), [ada.id]);
    assert.deepEqual(await found("q=Bob"), [bob.id]);
    assert.deepEqual(await found(`q=${encodeURIComponent("+44 7700 900123")}`), [ada.id]);
    assert.deepEqual(await found("tag=uk"), [ada.id, bob.id].sort());
    assert.deepEqual(await found("tag=vip&q=bob"), []);
    assert.deepEqual(await found("active=no"), [cy.id]);
    assert.deepEqual(await found("unsubscribed=yes"), [bob.id]);
    assert.deepEqual(await found("unsubscribed=no&active=yes"), [ada.id]);
    const none = await v.get("/dashboard/contacts?q=nobody-at-all");
    assert.match(none.html, /No contact matches these filters/);
    assert.ok(!none.html.includes("No contacts yet"));
  },
);

dbTest("a contact's page shows its details, preferences, device tokens, tags, custom fields and messages", async () => {
  const { deps, team, v } = await signedInFixture();
  const c = await createContact(deps.sql, team.id, {
    email: "grace@example.com",
    first_name: "Grace",
    tags: ["navy"],
    custom_fields: { plan: "gold", seats: 12 },
  });
  await deps.sql`insert into device_tokens ${
    deps.sql({ team_id: team.id, contact_id: c.id, token: "fcm-token-0123456789abcdef", platform: "android" })
  }`;
  const [oldest, newest] = await insertMessages(deps, team.id, [
    { contact_id: c.id, to_address: "grace@example.com" },
    { contact_id: c.id, to_address: "grace@example.com", status: "failed" },
  ]);
  const page = await v.get(`/dashboard/contacts/${c.id}`);
  assert.equal(page.status, 200);
  assert.match(page.html, /<h1>grace@example.com<\/h1>/);
  assert.match(page.html, /navy/);
  assert.match(page.html, /<dt>plan<\/dt><dd><code>gold<\/code>/);
  assert.match(page.html, /<dt>seats<\/dt><dd><code>12<\/code>/);
  assert.match(page.html, /fcm-token-012345…/);
  assert.ok(!page.html.includes("fcm-token-0123456789abcdef"), "a token is shown shortened");
  // Defaults: transactional on everywhere, promotional email off.
  assert.match(page.html, /name="email.transactional" checked /);
  assert.match(page.html, /name="email.promotional"\s+aria-label/);
  assert.ok(page.html.indexOf(newest) < page.html.indexOf(oldest), "newest message first");
  assert.match(page.html, /failed/);
});

dbTest("a contact's message history pages by keyset", async () => {
  const { deps, team, v } = await signedInFixture();
  const c = await createContact(deps.sql, team.id, { email: "many@example.com" });
  const ids = await insertMessages(deps, team.id, Array.from({ length: 30 }, () => ({ contact_id: c.id })));
  const messageLinks = (html: string) =>
    [...html.matchAll(/href="\/dashboard\/messages\/(msg_\w+)"/g)].map((m) => m[1]);
  const first = await v.get(`/dashboard/contacts/${c.id}`);
  const second = await v.get(nextLink(first.html)!);
  assert.deepEqual([...messageLinks(first.html), ...messageLinks(second.html)], ids.toReversed());
  assert.equal(nextLink(second.html), undefined);
});

dbTest("editing a contact's preferences in the form persists, through the API's own update", async () => {
  const { app, deps, team, keys, v } = await signedInFixture();
  const c = await createContact(deps.sql, team.id, { email: "pref@example.com" });
  await v.get(`/dashboard/contacts/${c.id}`);
  // Ticked: email promotional and sms transactional only.
  const saved = await v.post(`/dashboard/contacts/${c.id}/preferences`, {
    "email.promotional": "on",
    "sms.transactional": "on",
  });
  assert.equal(saved.status, 303);
  assert.equal(saved.headers.get("location"), `/dashboard/contacts/${c.id}?saved=1`);
  const api = await app.request(`/api/v1/contacts/${c.id}/preferences`, { headers: { "X-API-Key": keys.live } });
  const body = await api.json();
  assert.deepEqual(body.preferences, {
    email: { transactional: false, promotional: true },
    sms: { transactional: true, promotional: false },
    whatsapp: { transactional: false, promotional: false },
    push: { transactional: false, promotional: false },
  });
  const page = await v.get(`/dashboard/contacts/${c.id}?saved=1`);
  assert.match(page.html, /Preferences saved/);
  assert.match(page.html, /name="email.promotional" checked /);
  assert.ok(!/name="email.transactional" checked /.test(page.html));
});

dbTest("a CSV import creates the good rows and reports each skipped row with its number and why", async () => {
  const { app, deps, team, v } = await signedInFixture();
  await createContact(deps.sql, team.id, { email: "taken@example.com" });
  await v.get("/dashboard/contacts");
  const csv = [
    "Email,Phone,First Name,last_name,external_id,tags,plan",
    'ann@example.com,+14155550101,Ann,Smith,crm-1,"vip,beta",gold',
    "not-an-email,,Bad,,,,",
    "taken@example.com,,Dup,,,,",
    "ann@example.com,,Again,,,,",
    "bo@example.com,12345,Bo,,,,",
    ",,No email,,,,",
    "cy@example.com,,Cy,,,uk;fr,",
  ].join("\n");
  const res = await upload(v, app, csv);
  assert.equal(res.status, 303);
  const path = res.headers.get("location")!;
  assert.match(path, /^\/dashboard\/contacts\/imports\/[0-9a-f-]{36}$/);
  const html = await finishedImport(v, path);
  assert.match(html, /Import finished/);
  assert.match(html, /7 of 7 rows/);
  assert.match(html, /2 created, 5 skipped/);
  const rows = [
    ...html.matchAll(
      /<td data-label="Row">(\d+)<\/td><td data-label="Email">([^<]*)<\/td><td data-label="Why">([^<]+)</g,
    ),
  ]
    .map((m) => [Number(m[1]), m[2], m[3]]);
  assert.deepEqual(rows.map((r) => r[0]), [3, 4, 5, 6, 7]);
  assert.match(String(rows[0][2]), /email/i);
  assert.match(String(rows[1][2]), /already have a contact with email taken@example.com/);
  assert.match(String(rows[2][2]), /already have a contact with email ann@example.com/);
  assert.match(String(rows[3][2]), /phone/);
  assert.match(String(rows[4][2]), /email/i);
  const [ann] = await deps.sql`select * from contacts where team_id = ${team.id} and email = 'ann@example.com'`;
  assert.equal(ann.first_name, "Ann");
  assert.equal(ann.external_id, "crm-1");
  assert.deepEqual(ann.tags, ["vip", "beta"]);
  assert.deepEqual(ann.custom_fields, { phone: "+14155550101", plan: "gold" });
  const [cy] = await deps.sql`select tags from contacts where team_id = ${team.id} and email = 'cy@example.com'`;
  assert.deepEqual(cy.tags, ["uk", "fr"]);
  assert.match((await v.get("/dashboard/contacts")).html, /people\.csv/);
});

dbTest("a CSV import larger than one chunk is resumed where it stopped and creates nobody twice", async () => {
  const { app, deps, team, v } = await signedInFixture();
  await v.get("/dashboard/contacts");
  const lines = Array.from({ length: 1200 }, (_, i) => `row${i}@example.com,R${i}`);
  const res = await upload(v, app, ["email,first_name", ...lines].join("\n"));
  const path = res.headers.get("location")!;
  const html = await finishedImport(v, path);
  assert.match(html, /1200 created, 0 skipped/);
  // As if a process had stopped after the first chunk: the import goes back to row 500, untouched for a while.
  const id = path.split("/").at(-1)!;
  await deps.sql`
    update contact_imports set status = 'running', next_row = 500, finished_at = null,
      heartbeat_at = now() - interval '1 hour', csv = ${["email,first_name", ...lines].join("\n")}
    where id = ${id}`;
  const resumed = await finishedImport(v, path);
  assert.match(resumed, /Import finished/);
  assert.match(resumed, /1200 of 1200 rows/);
  const [{ n }] = await deps.sql`select count(*)::int as n from contacts where team_id = ${team.id}`;
  assert.equal(n, 1200);
});

dbTest("a file without an email column is refused with a page that says so", async () => {
  const { app, v } = await signedInFixture();
  await v.get("/dashboard/contacts");
  const res = await upload(v, app, "name,phone\nAnn,+14155550101\n");
  assert.equal(res.status, 400);
  assert.match(await res.text(), /no email column/);
});

dbTest("another team's contacts, preferences and imports are 404 and never listed", async () => {
  const { deps, app, v, visitor } = await signedInFixture();
  const other = await testTeam(deps);
  const theirs = await createContact(deps.sql, other.team.id, { email: "secret@example.com" });
  const stranger = visitor();
  await stranger.signIn((await testUser(deps, other.team.id)).email);
  await stranger.get("/dashboard/contacts");
  const imported = await upload(stranger, app, "email\nother@example.com\n");
  const importPath = imported.headers.get("location")!;
  await finishedImport(stranger, importPath);

  assert.ok(!(await v.get("/dashboard/contacts")).html.includes("secret@example.com"));
  assert.ok(!(await v.get("/dashboard/contacts?q=secret")).html.includes("secret@example.com"));
  assert.equal((await v.get(`/dashboard/contacts/${theirs.id}`)).status, 404);
  assert.equal(
    (await v.post(`/dashboard/contacts/${theirs.id}/preferences`, { "email.promotional": "on" })).status,
    404,
  );
  const [{ preferences }] = await deps.sql`select preferences from contacts where id = ${theirs.id}`;
  assert.equal(preferences.email.promotional, false);
  assert.equal((await v.get(importPath)).status, 404);
  assert.ok(!(await v.get("/dashboard/contacts")).html.includes(importPath));
  assert.equal((await v.get(`/dashboard/contacts?after=${theirs.id}`)).status, 400);
});

dbTest("a member searches contacts, edits preferences and imports a CSV", async () => {
  const { app, deps, team, v } = await signedInFixture("member");
  const c = await createContact(deps.sql, team.id, { email: "m@example.com" });
  assert.deepEqual(contactLinks((await v.get("/dashboard/contacts?q=m%40example")).html), [c.id]);
  assert.equal((await v.get(`/dashboard/contacts/${c.id}`)).status, 200);
  assert.equal((await v.post(`/dashboard/contacts/${c.id}/preferences`, { "push.promotional": "on" })).status, 303);
  await v.get("/dashboard/contacts");
  const res = await upload(v, app, "email\nmember-made@example.com\n");
  assert.match(await finishedImport(v, res.headers.get("location")!), /1 created, 0 skipped/);
});

dbTest("a signed-out visitor is sent to sign in from every contacts page", async () => {
  const { deps, team, visitor } = await dashboardFixture();
  const c = await createContact(deps.sql, team.id, { email: "x@example.com" });
  const v = visitor();
  for (const path of ["/dashboard/contacts", `/dashboard/contacts/${c.id}`, "/dashboard/messages"]) {
    const res = await v.get(path);
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/dashboard/sign-in");
  }
});

dbTest(
  "an upload or a preference change without the session's forgery token is refused and changes nothing",
  async () => {
    const { app, deps, team, v } = await signedInFixture();
    const c = await createContact(deps.sql, team.id, { email: "guarded@example.com" });
    await v.get("/dashboard/contacts");
    const form = new FormData();
    form.set("file", new File(["email\nforged@example.com\n"], "forged.csv", { type: "text/csv" }));
    const forged = await app.request("/dashboard/contacts/imports", {
      method: "POST",
      body: form,
      headers: { Cookie: v.cookie!, Origin: "http://localhost", "Sec-Fetch-Site": "same-origin" },
    });
    assert.equal(forged.status, 403);
    const crossSite = await v.post(`/dashboard/contacts/${c.id}/preferences`, { "email.promotional": "on" }, {
      Origin: "https://evil.example",
      "Sec-Fetch-Site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
    const [{ n }] = await deps.sql`select count(*)::int as n from contact_imports where team_id = ${team.id}`;
    assert.equal(n, 0);
    const [{ preferences }] = await deps.sql`select preferences from contacts where id = ${c.id}`;
    assert.equal(preferences.email.promotional, false);
  },
);
