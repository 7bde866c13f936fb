import assert from "node:assert/strict";
import { keyPrefix } from "../../shared/api_keys.ts";
import { findTemplate, upsertTemplate } from "../../shared/templates.ts";
import { dbTest, jsonRequest, testTeam } from "../../shared/testing.ts";
import { balanceMicros } from "../../shared/wallet.ts";
import { startWorker } from "../../worker/queue.ts";
import { dashboardFixture, testUser, type Visitor, waitForOutbox } from "./testing.ts";

/** The id of the template whose editor a redirect leads to. */
function editedId(location: string | null): string {
  const id = /\/dashboard\/templates\/\w+\/([0-9a-f-]{36})\?saved$/.exec(location ?? "")?.[1];
  assert.ok(id, `not an editor: ${location}`);
  return id;
}

/** The text of the element with `id` in a page (tags removed, entities of the escaper undone). */
function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(dd|pre|span|p|strong|code)>`).exec(html);
  return match?.[1].replace(/<[^>]+>/g, "").replaceAll("&amp;", "&").replaceAll("&#39;", "'").replaceAll(
    "&quot;",
    '"',
  ).replaceAll("&lt;", "<").replaceAll("&gt;", ">").trim();
}

/** Posts a draft to a preview as the editor's script does: the fragment alone. */
function previewFragment(v: Visitor, path: string, fields: Record<string, string>) {
  return v.post(path, fields, { "X-Dashboard-Fragment": "preview" });
}

async function signedIn(role: "owner" | "member" = "owner") {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(role === "owner" ? f.owner.email : f.member.email);
  return { ...f, v };
}

dbTest(
  "an SMS template is created, listed, edited and deleted in the dashboard, and sends see each change",
  async () => {
    const { app, deps, team, keys, v } = await signedIn();
    const created = await v.post("/dashboard/templates/sms/new", { key: "order-shipped", body: "Order {{n}} shipped" });
    assert.equal(created.status, 303);
    const id = editedId(created.headers.get("location"));
    const editor = await v.get(created.headers.get("location")!);
    assert.equal(editor.status, 200);
    assert.match(editor.html, /Saved\. Sends use this version/);
    assert.match(editor.html, /Order \{\{n\}\} shipped/);

    const list = await v.get("/dashboard/templates/sms");
    assert.ok(list.html.includes(`href="/dashboard/templates/sms/${id}"`));
    assert.ok(list.html.includes("<code>order-shipped</code>"));
    const api = await app.request("/api/v1/templates?template_key=order-shipped", {
      headers: { "X-API-Key": keys.live },
    });
    assert.equal((await api.json()).templates[0].body, "Order {{n}} shipped");

    const saved = await v.post(`/dashboard/templates/sms/${id}`, {
      key: "renamed-is-ignored",
      body: "Order {{n}} is on its way",
      variation_country_0: "de",
      variation_body_0: "Bestellung {{n}} ist unterwegs",
      status: "pending",
    });
    assert.equal(saved.status, 303);
    assert.equal(editedId(saved.headers.get("location")), id);
    const stored = await findTemplate(deps.sql, team.id, "sms", id);
    assert.equal(stored?.key, "order-shipped");
    assert.equal(stored?.body, "Order {{n}} is on its way");
    assert.deepEqual(stored?.country_variations, { DE: "Bestellung {{n}} ist unterwegs" });
    assert.equal(stored?.status, "pending");

    const send = async () => {
      const body = { template_key: "order-shipped", recipient_type: "direct_sms", direct_phone: "+14155550123" };
      const res = await app.request("/api/v1/sms/send", jsonRequest("POST", body, { "X-API-Key": keys.test }));
      return (await res.json()).message;
    };
    assert.equal(await send(), "Template 'order-shipped' is not approved");
    const deleted = await v.post(`/dashboard/templates/sms/${id}/delete`);
    assert.equal(deleted.status, 303);
    assert.equal(deleted.headers.get("location"), "/dashboard/templates/sms");
    assert.equal(await findTemplate(deps.sql, team.id, "sms", id), undefined);
    assert.equal(await send(), "Template 'order-shipped' not found for team");
    assert.equal((await v.get(`/dashboard/templates/sms/${id}`)).status, 404);
    assert.equal((await v.post(`/dashboard/templates/sms/${id}/delete`)).status, 404);
  },
);

dbTest(
  "each channel's editor saves its own fields: email subject and HTML, WhatsApp category, push title",
  async () => {
    const { deps, team, v } = await signedIn();
    const cases = [
      ["email", { key: "welcome", subject: "Hi {{name}}", html: "<p>Hi</p>", text: "" }],
      ["whatsapp", { key: "receipt", body: "Paid {{1}}", category: "UTILITY", status: "rejected" }],
      ["push", { key: "ping", title: "Ping", body: "Pong {{x}}" }],
    ] as const;
    for (const [channel, fields] of cases) {
      const res = await v.post(`/dashboard/templates/${channel}/new`, fields);
      assert.equal(res.status, 303, `${channel}: ${res.html}`);
    }
    const email = await findTemplate(deps.sql, team.id, "email", "welcome");
    assert.deepEqual([email?.subject, email?.html, email?.text], ["Hi {{name}}", "<p>Hi</p>", null]);
    const whatsapp = await findTemplate(deps.sql, team.id, "whatsapp", "receipt");
    assert.deepEqual([whatsapp?.body, whatsapp?.category, whatsapp?.status], ["Paid {{1}}", "UTILITY", "rejected"]);
    const push = await findTemplate(deps.sql, team.id, "push", "ping");
    assert.deepEqual([push?.title, push?.body], ["Ping", "Pong {{x}}"]);
    const list = await v.get("/dashboard/templates/whatsapp");
    assert.match(list.html, /<td data-label="Category">UTILITY<\/td>/);
    assert.match(list.html, /class="status rejected">rejected</);
  },
);

dbTest(
  "a draft that the admin API would refuse comes back as typed, with the reasons, and nothing is saved",
  async () => {
    const { deps, team, v } = await signedIn();
    const res = await v.post("/dashboard/templates/whatsapp/new", { key: "no-category", body: "Hello {{1}}" });
    assert.equal(res.status, 400);
    assert.match(res.html, /The template was not saved/);
    assert.match(res.html, /The category is required/);
    assert.ok(res.html.includes('value="no-category"'));
    assert.ok(res.html.includes("Hello {{1}}"));
    assert.equal(await findTemplate(deps.sql, team.id, "whatsapp", "no-category"), undefined);

    const bad = await v.post("/dashboard/templates/sms/new", {
      key: "x",
      body: "b",
      variation_country_0: "Germany",
      variation_body_0: "Hallo",
    });
    assert.equal(bad.status, 400);
    assert.match(bad.html, /ISO 3166-1 alpha-2/);
    assert.equal((await v.post("/dashboard/templates/sms/new", { key: "", body: "b" })).status, 400);
  },
);

dbTest("a key already used on the channel is refused on create, and the stored template is kept", async () => {
  const { deps, team, v } = await signedIn();
  await upsertTemplate(deps.sql, team.id, "sms", "taken", { body: "Original" });
  const res = await v.post("/dashboard/templates/sms/new", { key: "taken", body: "Replacement" });
  assert.equal(res.status, 400);
  assert.match(res.html, /with the key taken exists already/);
  assert.equal((await findTemplate(deps.sql, team.id, "sms", "taken"))?.body, "Original");
  // The same key on another channel is a template of its own (one key serves a multi-channel send).
  assert.equal((await v.post("/dashboard/templates/push/new", { key: "taken", title: "T", body: "B" })).status, 303);
});

dbTest("the SMS preview fragment shows the segment count, encoding and price as the send bills them", async () => {
  const { v } = await signedIn();
  const path = "/dashboard/templates/sms/new/preview";
  const one = await previewFragment(v, path, { key: "k", body: "a".repeat(160) });
  assert.equal(one.status, 200);
  assert.match(one.html, /^<div id="preview-panel" data-channel="sms">/);
  assert.ok(!one.html.includes("<html"));
  assert.equal(textOf(one.html, "sms-segments"), "1");
  assert.match(textOf(one.html, "sms-encoding") ?? "", /^GSM-7/);
  assert.match(textOf(one.html, "preview-price") ?? "", /^\$0\.0075/);

  const two = await previewFragment(v, path, { key: "k", body: "a".repeat(161) });
  assert.equal(textOf(two.html, "sms-segments"), "2");
  assert.match(textOf(two.html, "preview-price") ?? "", /^\$0\.015 \(2 × \$0\.0075\)/);

  const unicode = await previewFragment(v, path, { key: "k", body: "Ça va? 👋" });
  assert.equal(textOf(unicode.html, "sms-segments"), "1");
  assert.match(textOf(unicode.html, "sms-encoding") ?? "", /^UCS-2/);
  const long = await previewFragment(v, path, { key: "k", body: "👋".repeat(36) });
  assert.equal(textOf(long.html, "sms-segments"), "2");
});

dbTest(
  "the SMS preview fills variables and contact variables, and takes the variation of the number's country",
  async () => {
    const { v } = await signedIn();
    const draft = {
      key: "k",
      body: "Hi {{contact_first_name}}, order {{n}}",
      variation_country_0: "DE",
      variation_body_0: "Hallo {{contact_first_name}}, Bestellung {{n}}{{missing}}",
      sample_first_name: "Ada",
      sample_variables: "n=42\nnot a variable line",
    };
    const path = "/dashboard/templates/sms/new/preview";
    const german = await previewFragment(v, path, { ...draft, sample_to: "+4915112345678" });
    assert.equal(textOf(german.html, "preview-text"), "Hallo Ada, Bestellung 42");
    assert.equal(textOf(german.html, "preview-country"), "DE");
    assert.match(german.html, /No value for <code>\{\{missing\}\}<\/code>/);
    const french = await previewFragment(v, path, { ...draft, sample_to: "+33612345678" });
    assert.equal(textOf(french.html, "preview-error"), "No SMS template variation for country FR");
    const plain = await previewFragment(v, path, { ...draft, variation_country_0: "", variation_body_0: "" });
    assert.equal(textOf(plain.html, "preview-text"), "Hi Ada, order 42");
  },
);

dbTest("the WhatsApp preview fills {{1}} from the variable 1 and prices a conversation of the category", async () => {
  const { v } = await signedIn();
  const path = "/dashboard/templates/whatsapp/new/preview";
  const fields = { key: "k", body: "Your code is {{1}}, valid {{2}} min", sample_variables: "1=9876\n2=5" };
  const utility = await previewFragment(v, path, { ...fields, category: "UTILITY" });
  assert.equal(textOf(utility.html, "preview-text"), "Your code is 9876, valid 5 min");
  assert.match(textOf(utility.html, "preview-price") ?? "", /^\$0\.004$/);
  const marketing = await previewFragment(v, path, { ...fields, category: "MARKETING", status: "pending" });
  assert.match(textOf(marketing.html, "preview-price") ?? "", /^\$0\.025$/);
  assert.match(marketing.html, /Only approved templates can be sent: this one is pending/);
});

dbTest(
  "the email preview renders the subject and the HTML in a sandboxed frame; the push preview a notification",
  async () => {
    const { v } = await signedIn();
    const email = await previewFragment(v, "/dashboard/templates/email/new/preview", {
      key: "k",
      subject: "Welcome {{contact_first_name}}",
      html: "<h1>Hi {{name}}</h1><script>alert(1)</script>",
      sample_first_name: "Ada",
      sample_variables: "name=<b>Ada</b>",
    });
    assert.equal(textOf(email.html, "preview-subject"), "Welcome Ada");
    assert.match(
      email.html,
      /<iframe sandbox="" srcdoc="&lt;h1&gt;Hi &lt;b&gt;Ada&lt;\/b&gt;&lt;\/h1&gt;&lt;script&gt;/,
    );
    const push = await previewFragment(v, "/dashboard/templates/push/new/preview", {
      key: "k",
      title: "Hello {{contact_first_name}}",
      body: "{{count}} new messages{{contact_email}}",
      sample_to: "device-token-0123456789abcdef0123456789",
      sample_first_name: "Bo",
      sample_variables: "count=3",
    });
    assert.equal(textOf(push.html, "preview-title"), "Hello Bo");
    assert.equal(textOf(push.html, "preview-text"), "3 new messages");
    // A push sample's address is a device token: it is no contact's email.
    assert.match(push.html, /No value for <code>\{\{contact_email\}\}<\/code>/);
    assert.match(push.html, /class="notification"/);
  },
);

dbTest("without script, the Preview button answers the whole editor with the draft kept and its preview", async () => {
  const { v } = await signedIn();
  const res = await v.post("/dashboard/templates/sms/new/preview", {
    key: "draft-key",
    body: "Hi {{x}}",
    sample_variables: "x=you",
  });
  assert.equal(res.status, 200);
  assert.match(res.html, /^<!DOCTYPE html>/);
  assert.ok(res.html.includes('value="draft-key"'));
  assert.equal(textOf(res.html, "preview-text"), "Hi you");
  assert.match(res.html, /<script [^>]*src="\/dashboard\/assets\/template-preview-[0-9a-f]{12}\.js" defer><\/script>/);
});

dbTest("the live preview script is served by the service, cacheable for good, and posts the form token", async () => {
  const { v } = await signedIn();
  const page = await v.get("/dashboard/templates/sms/new");
  const src = /<script [^>]*src="([^"]+)"/.exec(page.html)?.[1];
  const script = await v.get(src!);
  assert.equal(script.status, 200);
  assert.match(script.headers.get("content-type") ?? "", /text\/javascript/);
  assert.match(script.headers.get("cache-control") ?? "", /immutable/);
  assert.match(script.html, /new FormData\(form\)/);
  assert.match(page.html, /data-preview="\/dashboard\/templates\/sms\/new\/preview"/);
  assert.match(page.html, /name="_csrf"/);
});

dbTest(
  "send a test: the saved template goes through the team's test key to the outbox, rendered, never charged",
  async () => {
    const { deps, team, v } = await signedIn();
    startWorker(deps);
    const balance = await balanceMicros(deps.sql, team.id);
    const created = await v.post("/dashboard/templates/sms/new", {
      key: "hello",
      body: "Hello {{contact_first_name}} {{n}}",
    });
    const id = editedId(created.headers.get("location"));
    const res = await v.post(`/dashboard/templates/sms/${id}/test`, {
      body: "An unsaved edit",
      sample_to: "+14155550123",
      sample_first_name: "Ada",
      sample_variables: "n=7",
    });
    assert.equal(res.status, 200, res.html);
    assert.match(res.html, /Test accepted/);
    const triggerId = textOf(res.html, "test-trigger-id") ?? "";
    assert.match(triggerId, /^[0-9a-f-]{36}$/);
    assert.ok(res.html.includes("An unsaved edit"), "the draft stays as typed");
    const outbox = await waitForOutbox(deps, triggerId);
    assert.deepEqual(outbox, [{ to_address: "+14155550123", body: "Hello Ada 7" }]);
    assert.equal(await balanceMicros(deps.sql, team.id), balance);
    // The worker records the trigger in Postgres once its pass ends, which may be after the outbox row.
    let rows: { sandbox: boolean }[] = [];
    while (rows.length === 0) {
      rows = [...await deps.sql<{ sandbox: boolean }[]>`select sandbox from triggers where id = ${triggerId}`];
      if (rows.length === 0) await new Promise((r) => setTimeout(r, 25));
    }
    assert.equal(rows[0].sandbox, true);
  },
);

dbTest("an email test goes by default to the signed-in user's own address, rendered with the sample", async () => {
  const { deps, team, owner, v } = await signedIn();
  startWorker(deps);
  const template = await upsertTemplate(deps.sql, team.id, "email", "news", {
    subject: "News for {{contact_first_name}}",
    html: "<p>{{headline}}</p>",
  });
  const editor = await v.get(`/dashboard/templates/email/${template.id}`);
  assert.ok(editor.html.includes(`id="sample_to" name="sample_to" type="email" value="${owner.email}"`));
  assert.match(editor.html, />headline=<\/textarea>/);
  const res = await v.post(`/dashboard/templates/email/${template.id}/test`, {
    sample_to: owner.email,
    sample_first_name: "Ada",
    sample_variables: "headline=Big news",
  });
  assert.equal(res.status, 200, res.html);
  const outbox = await waitForOutbox(deps, textOf(res.html, "test-trigger-id") ?? "");
  assert.deepEqual(outbox, [{ to_address: owner.email, body: "<p>Big news</p>" }]);
});

dbTest("a test send the API would refuse shows why: a bad number, a pending template, no test key", async () => {
  const { deps, team, keys, v } = await signedIn();
  const template = await upsertTemplate(deps.sql, team.id, "sms", "t", { body: "Hi" });
  const bad = await v.post(`/dashboard/templates/sms/${template.id}/test`, { body: "Hi", sample_to: "0151 123" });
  assert.equal(bad.status, 400);
  assert.match(textOf(bad.html, "test-result") ?? "", /direct_phone must be in E\.164 format/);
  await upsertTemplate(deps.sql, team.id, "sms", "t", { body: "Hi", status: "pending" });
  const pending = await v.post(`/dashboard/templates/sms/${template.id}/test`, {
    body: "Hi",
    sample_to: "+14155550123",
  });
  assert.match(textOf(pending.html, "test-result") ?? "", /Template 't' is not approved/);
  await deps.sql`update api_keys set revoked_at = now() where prefix = ${keyPrefix(keys.test)}`;
  await upsertTemplate(deps.sql, team.id, "sms", "t", { body: "Hi" });
  const keyless = await v.post(`/dashboard/templates/sms/${template.id}/test`, {
    body: "Hi",
    sample_to: "+14155550123",
  });
  assert.equal(keyless.status, 400);
  assert.match(textOf(keyless.html, "test-result") ?? "", /no test secret key/);
});

dbTest("another team's template id is 404 on every page and action, and stays as it was", async () => {
  const { deps, team, v } = await signedIn();
  const other = await testTeam(deps);
  const theirs = await upsertTemplate(deps.sql, other.team.id, "sms", "secret-plan", { body: "Their words" });
  const base = `/dashboard/templates/sms/${theirs.id}`;
  assert.equal((await v.get(base)).status, 404);
  for (const action of ["", "/preview", "/test", "/delete"]) {
    const res = await v.post(`${base}${action}`, { body: "Mine now", sample_to: "+14155550123" });
    assert.equal(res.status, 404, action);
    assert.ok(!res.html.includes("Their words"), action);
  }
  assert.equal((await previewFragment(v, `${base}/preview`, { body: "x" })).status, 404);
  // Under another channel's path, an id of the team's own is not found either.
  const mine = await upsertTemplate(deps.sql, team.id, "push", "p", { title: "t", body: "b" });
  assert.equal((await v.get(`/dashboard/templates/sms/${mine.id}`)).status, 404);
  const list = await v.get("/dashboard/templates/sms");
  assert.ok(!list.html.includes("secret-plan"));
  const kept = await findTemplate(deps.sql, other.team.id, "sms", theirs.id);
  assert.equal(kept?.body, "Their words");
});

dbTest(
  "a template post without the session's form token, or from another site, is refused and changes nothing",
  async () => {
    const { deps, team, v } = await signedIn();
    const template = await upsertTemplate(deps.sql, team.id, "sms", "guarded", { body: "Kept" });
    const forged = await v.post(`/dashboard/templates/sms/${template.id}`, { _csrf: "forged", body: "Changed" });
    assert.equal(forged.status, 403);
    assert.match(forged.html, /did not come from the dashboard/);
    const tokenless = await v.post("/dashboard/templates/sms/new", { _csrf: "", key: "new-one", body: "x" });
    assert.equal(tokenless.status, 403);
    const crossSite = await v.post(`/dashboard/templates/sms/${template.id}/delete`, {}, {
      Origin: "https://evil.example",
      "Sec-Fetch-Site": "cross-site",
    });
    assert.equal(crossSite.status, 403);
    assert.equal((await findTemplate(deps.sql, team.id, "sms", "guarded"))?.body, "Kept");
    assert.equal(await findTemplate(deps.sql, team.id, "sms", "new-one"), undefined);
  },
);

dbTest("members create and edit templates (only keys, people and channel accounts are owner-only)", async () => {
  const { deps, team, v } = await signedIn("member");
  const page = await v.get("/dashboard/templates/push");
  assert.equal(page.status, 200);
  assert.ok(page.html.includes('href="/dashboard/templates"'));
  const res = await v.post("/dashboard/templates/push/new", { key: "m", title: "By a member", body: "b" });
  assert.equal(res.status, 303);
  assert.equal((await findTemplate(deps.sql, team.id, "push", "m"))?.title, "By a member");
});

dbTest("an empty channel says what to do first; the reserved OTP key is explained where it applies", async () => {
  const { deps, team, v } = await signedIn();
  const sms = await v.get("/dashboard/templates/sms");
  assert.match(sms.html, /No SMS templates yet — create one/);
  assert.match(sms.html, /<code>verify-api-otp-sms<\/code>/);
  assert.ok(sms.html.includes('href="/dashboard/templates/sms/new?key=verify-api-otp-sms"'));
  assert.match((await v.get("/dashboard/templates/whatsapp")).html, /<code>verify_api_otp_whatsapp<\/code>/);
  const push = await v.get("/dashboard/templates/push");
  assert.match(push.html, /No Push templates yet/);
  assert.ok(!push.html.includes("otp-note"));
  assert.equal((await v.get("/dashboard/templates")).headers.get("location"), "/dashboard/templates/email");
  assert.equal((await v.get("/dashboard/templates/fax")).status, 404);

  const otp = await v.get("/dashboard/templates/sms/new?key=verify-api-otp-sms");
  assert.ok(otp.html.includes('value="verify-api-otp-sms"'));
  assert.match(otp.html, /otp_code=123456\nexpiry_minutes=10/);
  await upsertTemplate(deps.sql, team.id, "sms", "verify-api-otp-sms", { body: "Code {{otp_code}}" });
  const listed = await v.get("/dashboard/templates/sms");
  assert.ok(!listed.html.includes("new?key=verify-api-otp-sms"));
  const incomplete = await previewFragment(v, "/dashboard/templates/sms/new/preview", {
    key: "verify-api-otp-sms",
    body: "Code {{otp_code}}",
    sample_variables: "otp_code=123456",
  });
  assert.match(incomplete.html, /OTP codes will not use this template/);
  const complete = await previewFragment(v, "/dashboard/templates/sms/new/preview", {
    key: "verify-api-otp-sms",
    body: "Code {{otp_code}}, {{expiry_minutes}} min",
    sample_variables: "otp_code=123456\nexpiry_minutes=10",
  });
  assert.ok(!complete.html.includes("OTP codes will not use"));
  assert.equal(textOf(complete.html, "preview-text"), "Code 123456, 10 min");
});

dbTest("a user of another team sees only their own templates in the list", async () => {
  const { deps, team, visitor } = await dashboardFixture();
  await upsertTemplate(deps.sql, team.id, "email", "ours", { subject: "s", html: "h" });
  const other = await testTeam(deps);
  const stranger = await testUser(deps, other.team.id, "member");
  const v = visitor();
  await v.signIn(stranger.email);
  const list = await v.get("/dashboard/templates/email");
  assert.match(list.html, /No Email templates yet/);
  assert.ok(!list.html.includes("ours"));
});
