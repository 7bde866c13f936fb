import assert from "node:assert/strict";
import { DELETED_ADDRESS } from "../../shared/contacts/queries.ts";
import { dbTest } from "../../shared/testing.ts";
import { randomToken, sendingFixture } from "../../worker/testing.ts";

dbTest("deleting a contact keeps its message history, anonymized", async () => {
  const f = await sendingFixture();
  const contact = await f.contact({ first_name: "Ada", custom_fields: { phone: "+14155550199" } });
  const kept = await f.contact({});
  await f.template("email", "hello", {
    subject: "Hi {{contact_first_name}}",
    html: "<p>Hi {{contact_first_name}}</p>",
  });
  const token = randomToken(64);
  await f.device(contact.id, token);
  const sends = [
    await f.post("/api/v1/messages/send", {
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      template_key: "hello",
    }),
    await f.post("/api/v1/push/send", {
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      title: "T",
      body: "B",
    }),
    await f.post("/api/v1/messages/send", {
      recipient_type: "contact",
      contact_external_id: kept.external_id,
      template_key: "hello",
    }),
  ];
  const triggers: Awaited<ReturnType<typeof f.finished>>[] = [];
  for (const res of sends) triggers.push(await f.finished(res));
  for (const { trigger } of triggers) assert.equal(trigger.summary.sent, 1, JSON.stringify(trigger));

  const res = await f.app.request(`/api/v1/contacts/${contact.id}`, {
    method: "DELETE",
    headers: { "X-API-Key": f.keys.live },
  });
  assert.equal(res.status, 200);

  // The history stays: the same messages, statuses and counts.
  const [email, push, other] = await Promise.all(triggers.map((t) => f.waitForTrigger(t.trigger_id)));
  assert.deepEqual(email.summary, triggers[0].trigger.summary);
  assert.deepEqual(push.summary, triggers[1].trigger.summary);
  const rows = await f.deps.sql<{ trigger_id: string; status: string; to_address: string | null; recipient: string }[]>`
    select trigger_id, status, to_address, recipient from messages
    where trigger_id in ${f.deps.sql(triggers.map((t) => t.trigger_id))} order by trigger_id`;
  assert.equal(rows.length, 3);
  const ofContact = rows.filter((r) => r.trigger_id !== triggers[2].trigger_id);
  for (const row of ofContact) {
    assert.equal(row.status, "sent");
    assert.equal(row.to_address, null);
    assert.ok(!row.recipient.includes(token), "the device token is gone from the delivery key");
  }
  // Nothing that named the contact: not its address in the jobs view, not the outbox copy.
  const direct = await (await f.get(`/api/v1/triggers/${triggers[0].trigger_id}/direct`)).json();
  const jobs = await (await f.get(direct.executions[0].jobs_endpoint)).json();
  assert.equal(jobs.jobs.length, 1);
  assert.equal(jobs.jobs[0].recipient, null);
  assert.equal(jobs.jobs[0].status, "sent");
  for (const t of triggers.slice(0, 2)) {
    const copies = await f.outbox(t.trigger_id);
    assert.equal(copies.length, 1, "the outbox still shows that a message went out");
    assert.equal(copies[0].to_address, DELETED_ADDRESS);
    assert.equal(copies[0].subject, null);
    assert.equal(copies[0].body, null);
  }
  const dump = JSON.stringify(await f.deps.sql`select * from messages where team_id = ${f.team.id}`);
  assert.ok(!dump.includes(contact.email) && !dump.includes(token), "no message of the team names the contact");
  // Another contact's history is untouched.
  assert.equal(other.summary.sent, 1);
  const otherCopy = await f.outbox(triggers[2].trigger_id);
  assert.equal(otherCopy[0].to_address, kept.email);
  assert.equal(rows.find((r) => r.trigger_id === triggers[2].trigger_id)?.to_address, kept.email);
});
