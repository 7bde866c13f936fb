import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

dbTest("POST /sms/send to a number queues, delivers to the outbox and charges per segment", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hello", { body: "Hi {{name}}, your code is {{code}}" });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "hello",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
    variables: { name: "Ann", code: "42" },
  });
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.equal(body.success, true);
  assert.equal(body.message, "queued successfully");
  assert.match(body.job_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.deepEqual(body.data, { trigger_id: body.trigger_id, job_id: body.job_id });
  assert.equal(body.scheduled_for, undefined);
  const trigger = await f.waitForTrigger(body.trigger_id);
  assert.equal(trigger.status, "completed");
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  const outbox = await f.outbox(body.trigger_id);
  assert.deepEqual(outbox, [{
    to_address: "+14155550123",
    channel: "sms",
    subject: null,
    body: "Hi Ann, your code is 42",
  }]);
  assert.equal(await f.balance(), 0.9925);
});

dbTest("POST /sms/send bills a long or non-GSM text per segment", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "long", { body: "x".repeat(161) });
  await f.template("sms", "unicode", { body: "Привет {{name}}" });
  const long = await (await f.post("/api/v1/sms/send", {
    template_key: "long",
    recipient_type: "direct_sms",
    direct_sms: "+14155550124",
  })).json();
  await f.waitForTrigger(long.trigger_id);
  assert.equal(await f.balance(), 1 - 0.015);
  const unicode = await (await f.post("/api/v1/sms/send", {
    template_key: "unicode",
    recipient_type: "direct_sms",
    direct_phone: "+14155550124",
    variables: { name: "ж".repeat(64) },
  })).json();
  await f.waitForTrigger(unicode.trigger_id);
  assert.equal(await f.balance(), 1 - 0.015 - 0.015);
  const jobs = await (await f.get(`/api/v1/sms/executions/${unicode.trigger_id}/jobs`)).json();
  assert.equal(jobs.jobs[0].cost, 0.015);
  assert.equal(jobs.jobs[0].status, "sent");
});

dbTest("POST /sms/send to a contact fills the contact variables and uses custom_fields.phone", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", {
    body: "Hi {{contact_first_name}} {{contact_last_name}} ({{contact_external_id}}, {{contact_phone}})",
  });
  await f.contact({
    external_id: "u-1",
    first_name: "Ann",
    last_name: "Lee",
    custom_fields: { phone: "+14155550199" },
  });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "contact",
    contact_external_id: "u-1",
  });
  const { trigger_id, trigger } = await f.finished(res);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 1, failed: 0, filtered: 0 });
  assert.deepEqual((await f.outbox(trigger_id)).map((m) => [m.to_address, m.body]), [
    ["+14155550199", "Hi Ann Lee (u-1, +14155550199)"],
  ]);
});

dbTest("POST /sms/send to all reaches the active contacts with SMS opt-in, and filters the rest", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Hi {{contact_first_name}}" });
  const phone = (n: number) => ({ phone: `+1415555${2000 + n}` });
  await f.contact({ first_name: "In", custom_fields: phone(1) });
  await f.contact({ first_name: "Formatted", custom_fields: { phone: "001 415 555 2002" } });
  await f.contact({ first_name: "Inactive", is_active: false, custom_fields: phone(3) });
  await f.contact({ external_id: "unsubscribed", custom_fields: phone(4) });
  await f.contact({ external_id: "opted-out", custom_fields: phone(5) });
  // Stored before preferences were written: the defaults apply (SMS transactional on).
  await f.contact({ first_name: "Legacy", custom_fields: phone(6) });
  await f.deps.sql`update contacts set is_unsubscribed = true
    where team_id = ${f.team.id} and external_id = 'unsubscribed'`;
  await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{sms,transactional}', 'false')
    where team_id = ${f.team.id} and external_id = 'opted-out'`;
  await f.deps.sql`update contacts set preferences = preferences - 'sms'
    where team_id = ${f.team.id} and first_name = 'Legacy'`;
  const { trigger_id, trigger } = await f.finished(
    await f.post("/api/v1/sms/send", { template_key: "hi", recipient_type: "all" }),
  );
  assert.deepEqual(trigger.summary, { total_contacts: 6, sent: 3, failed: 0, filtered: 3 });
  const sent = (await f.outbox(trigger_id)).map((m) => [m.to_address, m.body]).sort();
  assert.deepEqual(sent, [
    ["+14155552001", "Hi In"],
    ["+14155552002", "Hi Formatted"],
    ["+14155552006", "Hi Legacy"],
  ]);
});

dbTest("POST /sms/send fails a contact without a phone number and filters an opted-out one", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Hi" });
  await f.contact({ external_id: "no-phone" });
  await f.contact({ external_id: "opted-out", custom_fields: { phone: "+14155550100" } });
  await f.deps.sql`update contacts set preferences = jsonb_set(preferences, '{sms,transactional}', 'false')
    where team_id = ${f.team.id} and external_id = 'opted-out'`;
  const noPhone = await (await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "contact",
    contact_external_id: "no-phone",
  })).json();
  const failed = await f.waitForTrigger(noPhone.trigger_id);
  assert.equal(failed.status, "failed");
  assert.deepEqual(failed.summary, { total_contacts: 1, sent: 0, failed: 1, filtered: 0 });
  const jobs = await (await f.get(`/api/v1/sms/executions/${noPhone.trigger_id}/jobs`)).json();
  assert.equal(jobs.jobs[0].error, "Contact has no phone number in E.164 format (custom_fields.phone)");
  const optedOut = await (await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "contact",
    contact_external_id: "opted-out",
  })).json();
  const filtered = await f.waitForTrigger(optedOut.trigger_id);
  assert.equal(filtered.status, "completed");
  assert.deepEqual(filtered.summary, { total_contacts: 1, sent: 0, failed: 0, filtered: 1 });
  assert.equal(await f.balance(), 1);
});

dbTest(
  "POST /sms/send tells apart countries that share a calling code: +1 by area code, Kazakhstan in +7",
  async () => {
    const f = await sendingFixture();
    await f.fund(1);
    await f.template("sms", "shared", {
      body: "unused",
      country_variations: { US: "Hi US", JM: "Hi Jamaica", RS: "Zdravo", KZ: "Sälem" },
    });
    const sent = async (phone: string) => {
      const { trigger_id } = await (await f.post("/api/v1/sms/send", {
        template_key: "shared",
        recipient_type: "direct_sms",
        direct_phone: phone,
      })).json();
      await f.waitForTrigger(trigger_id);
      const [job] = (await (await f.get(`/api/v1/sms/executions/${trigger_id}/jobs`)).json()).jobs;
      return [(await f.outbox(trigger_id)).map((m) => m.body).join(), job.error];
    };
    assert.deepEqual(await sent("+14155550123"), ["Hi US", null]);
    assert.deepEqual(await sent("+18765550123"), ["Hi Jamaica", null]);
    assert.deepEqual(await sent("+381601234567"), ["Zdravo", null]);
    assert.deepEqual(await sent("+77011234567"), ["Sälem", null]);
    assert.deepEqual(await sent("+79161234567"), ["", "No SMS template variation for country RU"]);
  },
);

dbTest("POST /sms/send picks the country variation of the number and fails a country without one", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "intl", { body: "unused", country_variations: { GB: "Hello from London", FR: "Bonjour" } });
  const gb = await (await f.post("/api/v1/sms/send", {
    template_key: "intl",
    recipient_type: "direct_sms",
    direct_phone: "+447700900123",
  })).json();
  await f.waitForTrigger(gb.trigger_id);
  assert.deepEqual((await f.outbox(gb.trigger_id)).map((m) => m.body), ["Hello from London"]);
  const us = await (await f.post("/api/v1/sms/send", {
    template_key: "intl",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
  })).json();
  const trigger = await f.waitForTrigger(us.trigger_id);
  assert.deepEqual(trigger.summary, { total_contacts: 1, sent: 0, failed: 1, filtered: 0 });
  const jobs = await (await f.get(`/api/v1/sms/executions/${us.trigger_id}/jobs`)).json();
  assert.equal(jobs.jobs[0].error, "No SMS template variation for country US");
  assert.equal(await f.balance(), 1 - 0.0075);
});

dbTest("POST /sms/send with a test key reaches only the outbox and charges nothing", async () => {
  const f = await sendingFixture();
  await f.template("sms", "hi", { body: "Hi" });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
  }, f.keys.test);
  assert.equal(res.status, 201);
  const { trigger_id } = await res.json();
  assert.equal((await f.waitForTrigger(trigger_id)).summary.sent, 1);
  assert.equal((await f.outbox(trigger_id)).length, 1);
  assert.equal(await f.balance(), 0);
});

dbTest("POST /sms/send with triggerAt is scheduled and not delivered before its time", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Later" });
  const at = new Date(Date.now() + 2_500);
  const res = await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
    triggerAt: at.toISOString(),
  });
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.equal(body.message, "scheduled successfully");
  assert.equal(body.scheduled_for, at.toISOString());
  assert.ok(body.delay_ms > 1_500 && body.delay_ms <= 2_500, `delay_ms ${body.delay_ms}`);
  await new Promise((r) => setTimeout(r, 1_000));
  const early = await (await f.get(`/api/v1/triggers/${body.trigger_id}`)).json();
  assert.equal(early.status, "pending");
  assert.equal(early.scheduled_for, at.toISOString());
  assert.deepEqual(await f.outbox(body.trigger_id), []);
  const done = await f.waitForTrigger(body.trigger_id);
  assert.equal(done.status, "completed");
  assert.ok(Date.now() >= at.getTime());
  assert.equal((await f.outbox(body.trigger_id)).length, 1);
});

dbTest("POST /sms/send accepts trigger_at and scheduled_at as aliases of triggerAt", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Later" });
  for (const field of ["trigger_at", "scheduled_at"]) {
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const res = await f.post("/api/v1/sms/send", {
      template_key: "hi",
      recipient_type: "direct_sms",
      direct_phone: "+14155550123",
      [field]: at,
    });
    assert.equal(res.status, 201);
    const body = await res.json();
    assert.equal(body.scheduled_for, at);
    assert.equal(body.message, "scheduled successfully");
  }
});

dbTest("POST /sms/send answers the errors of the specification", async () => {
  const f = await sendingFixture();
  await f.template("sms", "hi", { body: "Hi" });
  const send = (body: Record<string, unknown>) => f.send("/api/v1/sms/send", body);
  const direct = { template_key: "hi", recipient_type: "direct_sms", direct_phone: "+14155550123" };

  const missing = await send({ ...direct, template_key: "nope" });
  assert.equal(missing.status, 400);
  assert.equal(missing.body.message, "Template 'nope' not found for team");

  const badPhone = await send({ ...direct, direct_phone: "4155550123" });
  assert.equal(badPhone.status, 400);
  assert.equal(badPhone.body.message, "direct_phone must be in E.164 format");
  assert.deepEqual(badPhone.body.details, { field: "direct_phone", code: "invalid_format" });

  const poor = await send(direct);
  assert.equal(poor.status, 400);
  assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.0075, Available: 0");
  assert.equal(poor.body.code, "insufficient_balance");

  const unknown = await send({ template_key: "hi", recipient_type: "contact", contact_external_id: "ghost" });
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.message, "Contact with external_id 'ghost' not found");

  const noPhone = await send({ template_key: "hi", recipient_type: "direct_sms" });
  assert.equal(noPhone.status, 400);
  assert.deepEqual(noPhone.body.message, ["direct_phone should not be empty"]);

  const badType = await send({ template_key: "hi", recipient_type: "everyone" });
  assert.equal(badType.status, 400);
  assert.deepEqual(badType.body.message, ["recipient_type must be one of: direct_sms, contact, tag, all"]);

  const noTag = await send({ template_key: "hi", recipient_type: "tag" });
  assert.deepEqual(noTag.body.message, ["tag should not be empty"]);
  const tooMuch: [unknown, string][] = [
    [Array.from({ length: 101 }, (_, i) => `t${i}`), "tag must contain at most 100 elements"],
    [["x".repeat(256)], "tag.0 must be at most 255 characters"],
    ["x".repeat(30_000), "tag must be at most 25600 characters"],
  ];
  for (const [tag, message] of tooMuch) {
    const res = await send({ template_key: "hi", recipient_type: "tag", tag });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(res.body.message, [message]);
  }

  const badDate = await send({ ...direct, triggerAt: "tomorrow" });
  assert.equal(badDate.status, 400);
  assert.equal(badDate.body.message, "Invalid triggerAt format");

  const past = await send({ ...direct, triggerAt: "2020-01-01T00:00:00Z" });
  assert.equal(past.status, 400);
  assert.equal(past.body.message, "triggerAt must be a future date");
});

dbTest("POST /sms/send's wallet pre-check sees a top-up and a spent balance at once, not seconds later", async () => {
  const f = await sendingFixture();
  await f.template("sms", "hi", { body: "Hello" });
  const direct = (n: number) => ({ template_key: "hi", recipient_type: "direct_sms", direct_phone: `+1415555${n}` });

  assert.equal((await f.send("/api/v1/sms/send", direct(1001))).status, 400, "nothing in the wallet");
  // Topped up through the admin API: the next send is accepted.
  const topUp = await f.app.request(`/admin/v1/teams/${f.team.id}/wallet/topup`, {
    method: "POST",
    headers: { "Authorization": `Bearer ${f.deps.config.ADMIN_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ amount: 0.01 }),
  });
  assert.equal(topUp.status, 200);
  const paid = await f.send("/api/v1/sms/send", direct(1002));
  assert.equal(paid.status, 201, JSON.stringify(paid.body));
  assert.equal((await f.waitForTrigger(paid.body.trigger_id)).status, "completed");
  // That message left 0.0025: the next one is refused before it is queued.
  const poor = await f.send("/api/v1/sms/send", direct(1003));
  assert.equal(poor.status, 400, JSON.stringify(poor.body));
  assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.0075, Available: 0.0025");
});

dbTest("POST /sms/send's pre-check prices the rendered segments, and an exact balance is enough", async () => {
  const f = await sendingFixture();
  await f.fund(0.015);
  // 161 GSM-7 characters once rendered: two segments, 0.015.
  await f.template("sms", "long", { body: "{{text}}" });
  const send = () =>
    f.send("/api/v1/sms/send", {
      template_key: "long",
      recipient_type: "direct_sms",
      direct_phone: "+14155550123",
      variables: { text: "a".repeat(161) },
    });
  const paid = await send();
  assert.equal(paid.status, 201, JSON.stringify(paid.body));
  assert.equal((await f.waitForTrigger(paid.body.trigger_id)).summary.sent, 1);
  assert.equal(await f.balance(), 0);
  const poor = await send();
  assert.equal(poor.status, 400);
  assert.equal(poor.body.message, "Insufficient wallet balance. Required: 0.015, Available: 0");
});

dbTest("POST /sms/send refuses a template that is not approved", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "pending", { body: "Hi", status: "pending" });
  const res = await f.post("/api/v1/sms/send", {
    template_key: "pending",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
  });
  assert.equal(res.status, 400);
  assert.equal((await res.json()).message, "Template 'pending' is not approved");
});

dbTest("POST /sms/send with an Idempotency-Key replays the first answer and sends once", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Once" });
  const body = { template_key: "hi", recipient_type: "direct_sms", direct_phone: "+14155550123" };
  const first = await f.post("/api/v1/sms/send", body, f.keys.live, { "Idempotency-Key": "k-1" });
  const again = await f.post("/api/v1/sms/send", body, f.keys.live, { "Idempotency-Key": "k-1" });
  assert.equal(again.headers.get("idempotent-replayed"), "true");
  const a = await first.json();
  assert.deepEqual(await again.json(), a);
  await f.waitForTrigger(a.trigger_id);
  const [{ n }] = await f.deps.sql`select count(*)::int as n from outbox_all where team_id = ${f.team.id}`;
  assert.equal(n, 1);
});

dbTest("GET /sms/executions lists SMS executions and GET /sms/executions/{id} shows one", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Hi" });
  const { trigger_id } = await (await f.post("/api/v1/sms/send", {
    template_key: "hi",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
  })).json();
  await f.waitForTrigger(trigger_id);
  const list = await (await f.get("/api/v1/sms/executions?page=1&limit=10")).json();
  assert.equal(list.total, 1);
  assert.equal(list.executions[0].trigger_id, trigger_id);
  const id = list.executions[0].id;
  const byId = await (await f.get(`/api/v1/sms/executions/${id}`)).json();
  assert.deepEqual(
    { ...byId, created_at: undefined, completed_at: undefined },
    {
      id,
      trigger_id,
      channel: "sms",
      status: "completed",
      total_contacts: 1,
      sent_count: 1,
      failed_count: 0,
      filtered_count: 0,
      created_at: undefined,
      completed_at: undefined,
    },
  );
  const byTrigger = await (await f.get(`/api/v1/sms/executions/${trigger_id}`)).json();
  assert.equal(byTrigger.id, id);
  const missing = await f.get(`/api/v1/sms/executions/${crypto.randomUUID()}`);
  assert.equal(missing.status, 404);
});
