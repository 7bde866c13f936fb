import assert from "node:assert/strict";
import { createContact } from "../shared/contacts/queries.ts";
import { dbTest, randomEmail } from "../shared/testing.ts";
import { openSandbox, otpWorld, randomPhone, spyEnqueued, wrong } from "./testing.ts";

dbTest("add_contact creates the contact once verified, with names and phone, and never a duplicate", async () => {
  const world = await otpWorld();
  const { token, otps, body } = await openSandbox(world, ["email", "sms"], {
    add_contact: true,
    verification_mode: "all",
    first_name: "Ada",
    last_name: "Lovelace",
  });
  const email = (body.data as { recipients: { email: string; sms: string } }).recipients.email;
  const phone = (body.data as { recipients: { email: string; sms: string } }).recipients.sms;
  await world.post("/verify", { session_token: token, otps: { email: otps.email } });
  const before = await world.deps.sql`select id from contacts where team_id = ${world.team.id}`;
  assert.equal(before.length, 0, "not before the session is verified");
  const done = await (await world.post("/verify", { session_token: token, otps: { sms: otps.sms } })).json();
  const [contact] = await world.deps.sql`select * from contacts where team_id = ${world.team.id}`;
  assert.equal(contact.email, email);
  assert.equal(contact.first_name, "Ada");
  assert.equal(contact.last_name, "Lovelace");
  assert.deepEqual(contact.custom_fields, { phone });
  assert.equal(done.contact_id, contact.id);

  // A second session for an email that already is a contact makes no duplicate.
  const again = await openSandbox(world, ["email"], { add_contact: true, recipients: { email: email.toUpperCase() } });
  const res = await (await world.post("/verify", { session_token: again.token, otps: again.otps })).json();
  assert.equal(res.contact_id, contact.id);
  const all = await world.deps.sql`select id from contacts where team_id = ${world.team.id}`;
  assert.equal(all.length, 1);
});

dbTest("add_contact finds a contact that existed before the session", async () => {
  const world = await otpWorld();
  const { token, otps, body } = await openSandbox(world, ["email"], { add_contact: true });
  const email = (body.data as { recipients: { email: string } }).recipients.email;
  const existing = await createContact(world.deps.sql, world.team.id, { email });
  const res = await (await world.post("/verify", { session_token: token, otps })).json();
  assert.equal(res.contact_id, existing.id);
});

dbTest("metadata given at send comes back on verify", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["email"], { metadata: { order: 42, tags: ["a"] } });
  const res = await (await world.post("/verify", { session_token: token, otps })).json();
  assert.deepEqual(res.metadata, { order: 42, tags: ["a"] });
});

dbTest("add_contact without any email makes no contact", async () => {
  const world = await otpWorld();
  const { token, otps } = await openSandbox(world, ["sms"], { add_contact: true, recipients: { sms: randomPhone() } });
  const res = await (await world.post("/verify", { session_token: token, otps })).json();
  assert.equal(res.session_verified, true);
  assert.equal(res.contact_id, undefined);
  assert.equal((await world.deps.sql`select 1 from contacts where team_id = ${world.team.id}`).length, 0);
});

dbTest("the verify that verifies a session emits otp.verified, the one that locks it otp.locked", async () => {
  let spy: ReturnType<typeof spyEnqueued> | undefined;
  const world = await otpWorld({ kv: (kv) => (spy = spyEnqueued(kv)).kv, committer: () => spy!.committer });
  await world.deps.sql`insert into webhook_endpoints ${
    world.deps.sql({ team_id: world.team.id, url: "https://hooks.example.com/otp", secret: "whsec_test" })
  }`;
  const events = () =>
    (spy!.enqueued as { type: string; deliveries?: { event: { type: string; data: Record<string, unknown> } }[] }[])
      .filter((job) => job.type === "webhook-deliver")
      .flatMap((job) => job.deliveries!.map((d) => d.event));

  const verified = await openSandbox(world, ["email"], { metadata: { order: 7 } });
  await world.post("/verify", { session_token: verified.token, otps: verified.otps });
  await world.post("/verify", { session_token: verified.token, otps: verified.otps });
  const locked = await openSandbox(world, ["sms"], { config: { max_attempts: 2 } });
  const statuses = [];
  for (let i = 0; i < 3; i++) {
    const res = await world.post("/verify", { session_token: locked.token, otps: { sms: wrong(locked.otps.sms) } });
    statuses.push([res.status, (await res.json()).attempts_remaining]);
  }
  // The call that locks answers 200 with no attempt left; the call after it meets the lock.
  assert.deepEqual(statuses, [[200, 1], [200, 0], [400, 0]]);
  assert.deepEqual(events().map((e) => [e.type, e.data.session_id]), [
    ["otp.verified", verified.body.session_id],
    ["otp.locked", locked.body.session_id],
  ]);
  assert.deepEqual(events()[0].data.metadata, { order: 7 });
});

dbTest(
  "add_contact on an SMS-only session uses the email given among the recipients and names in metadata",
  async () => {
    const world = await otpWorld();
    const email = randomEmail("sms-only");
    const { token, otps, body } = await openSandbox(world, ["sms"], {
      add_contact: true,
      recipients: { sms: randomPhone(), email },
      metadata: { first_name: "Grace", last_name: "Hopper" },
    });
    assert.deepEqual(Object.keys((body.data as { recipients: object }).recipients), ["sms"]);
    const res = await (await world.post("/verify", { session_token: token, otps })).json();
    const [contact] = await world.deps.sql`select * from contacts where team_id = ${world.team.id}`;
    assert.equal(res.contact_id, contact.id);
    assert.equal(contact.email, email);
    assert.equal(contact.first_name, "Grace");
    assert.equal(contact.last_name, "Hopper");
    assert.match(contact.custom_fields.phone, /^\+1415\d{7}$/);
  },
);
