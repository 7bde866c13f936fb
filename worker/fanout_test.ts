import assert from "node:assert/strict";
import { asJson } from "../shared/db.ts";
import { dbTest } from "../shared/testing.ts";
import { sendingFixture } from "./testing.ts";

/** Inserts contacts in bulk (the fan-out tests need thousands). */
async function insertContacts(
  f: Awaited<ReturnType<typeof sendingFixture>>,
  rows: {
    tags: string[];
    is_active?: boolean;
    is_unsubscribed?: boolean;
    sms_promotional?: boolean;
    phone?: string | null;
  }[],
) {
  const values = rows.map((r, i) => ({
    team_id: f.team.id,
    external_id: `ext-${i}-${crypto.randomUUID().slice(0, 8)}`,
    email: `c${i}.${crypto.randomUUID().slice(0, 8)}@example.com`,
    first_name: `First${i}`,
    tags: r.tags,
    is_active: r.is_active ?? true,
    is_unsubscribed: r.is_unsubscribed ?? false,
    custom_fields: asJson(r.phone === null ? {} : { phone: r.phone ?? `+1415555${String(1000 + i).padStart(4, "0")}` }),
    preferences: asJson({
      email: { transactional: true, promotional: false },
      sms: { transactional: true, promotional: r.sms_promotional ?? true },
      whatsapp: { transactional: true, promotional: false },
      push: { transactional: true, promotional: false },
    }),
  }));
  for (let i = 0; i < values.length; i += 500) {
    await f.deps.sql`insert into contacts ${f.deps.sql(values.slice(i, i + 500))}`;
  }
}

dbTest("a tag send to 2,000 contacts with mixed preferences counts every contact exactly once", async () => {
  const f = await sendingFixture();
  await f.fund(100);
  await f.template("sms", "promo", { body: "Sale for {{contact_first_name}}!" });
  const rows = Array.from({ length: 2_000 }, (_, i) => ({
    tags: i % 10 === 9 ? ["other"] : ["vip"],
    is_active: i % 7 !== 0,
    is_unsubscribed: i % 11 === 0,
    sms_promotional: i % 5 !== 0,
    phone: i % 13 === 0 ? null : undefined,
  }));
  await insertContacts(f, rows);
  const tagged = rows.filter((r) => r.tags.includes("vip"));
  const filtered = tagged.filter((r) => !r.is_active || r.is_unsubscribed || !r.sms_promotional);
  const failed = tagged.filter((r) => !filtered.includes(r) && r.phone === null);
  const sent = tagged.length - filtered.length - failed.length;

  const started = performance.now();
  const res = await f.post("/api/v1/sms/send", {
    template_key: "promo",
    recipient_type: "tag",
    tag: ["vip"],
    message_category: "promotional",
  });
  assert.equal(res.status, 201);
  const { trigger_id } = await res.json();
  const trigger = await f.waitForTrigger(trigger_id);
  const ms = performance.now() - started;
  assert.deepEqual(trigger.summary, {
    total_contacts: tagged.length,
    sent,
    failed: failed.length,
    filtered: filtered.length,
  });
  assert.equal(trigger.status, "completed");
  assert.equal((await f.outbox(trigger_id)).length, sent);
  assert.equal(await f.balance(), Math.round((100 - sent * 0.0075) * 1e6) / 1e6);
  console.log(`tag send of ${tagged.length} in ${Math.round(ms)} ms`);
});

dbTest("concurrent fan-outs against a small wallet never take it below zero", async () => {
  const f = await sendingFixture();
  await f.fund(0.05);
  await f.template("sms", "hi", { body: "Hi {{contact_first_name}}" });
  await insertContacts(f, Array.from({ length: 100 }, (_, i) => ({ tags: [`group-${i % 4}`] })));
  const responses = await Promise.all(
    [0, 1, 2, 3].map((g) =>
      f.post("/api/v1/sms/send", { template_key: "hi", recipient_type: "tag", tag: [`group-${g}`] })
    ),
  );
  assert.deepEqual(responses.map((r) => r.status), [201, 201, 201, 201]);
  const triggers = await Promise.all(responses.map(async (r) => f.waitForTrigger((await r.json()).trigger_id)));
  const sum = (k: "sent" | "failed" | "total_contacts") => triggers.reduce((n, t) => n + t.summary[k], 0);
  assert.equal(sum("total_contacts"), 100);
  // 0.05 pays for 6 messages at 0.0075; every other one fails for want of money.
  assert.equal(sum("sent"), 6);
  assert.equal(sum("failed"), 94);
  assert.equal(await f.balance(), 0.005);
  const [{ negative }] = await f.deps.sql`
    select count(*)::int as negative from wallet_ledger where team_id = ${f.team.id} and balance_after_micros < 0`;
  assert.equal(negative, 0);
  const [failed] = await f.deps.sql`
    select error from messages where team_id = ${f.team.id} and status = 'failed' limit 1`;
  assert.equal(failed.error, "Insufficient wallet balance");
});

dbTest("the pipeline tells the team's webhooks about sent and failed messages and the finished trigger", async () => {
  const f = await sendingFixture();
  await f.fund(1);
  await f.template("sms", "hi", { body: "Hi" });
  const [endpoint] = await f.deps.sql`insert into webhook_endpoints ${
    f.deps.sql({ team_id: f.team.id, url: "http://127.0.0.1:9/hook", secret: "whsec_test" })
  } returning id`;
  await f.contact({ tags: ["w"], custom_fields: { phone: "+14155550111" } });
  await f.contact({ tags: ["w"] });
  const { trigger_id } =
    await (await f.post("/api/v1/sms/send", { template_key: "hi", recipient_type: "tag", tag: "w" }))
      .json();
  await f.waitForTrigger(trigger_id);
  let types: string[] = [];
  for (let i = 0; i < 200 && types.length < 3; i++) {
    const rows = await f.deps.sql`select event_type from webhook_attempts where endpoint_id = ${endpoint.id}`;
    types = rows.map((r) => r.event_type).sort();
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.deepEqual(types, ["message.failed", "message.sent", "trigger.completed"]);
});
