import assert from "node:assert/strict";
import { MAX_KEY_LENGTH } from "../../shared/http/schemas.ts";
import { dbTest } from "../../shared/testing.ts";
import { sendingFixture } from "../../worker/testing.ts";

dbTest("GET /templates?template_key= lists the team's templates under the key", async () => {
  const f = await sendingFixture();
  await f.template("email", "welcome", { subject: "Hi {{contact_first_name}}", html: "<p>{{code}}</p>" });
  await f.template("sms", "welcome", { body: "Hi {{contact_first_name}}", status: "pending" });
  await f.template("push", "other", { title: "T", body: "B" });
  const res = await f.get("/api/v1/templates?template_key=welcome");
  assert.equal(res.status, 200);
  const body = await res.json();
  assert.equal(body.template_key, "welcome");
  assert.equal(body.exists, true);
  assert.deepEqual(body.channels, ["email", "sms"]);
  const email = body.templates.find((t: { channel: string }) => t.channel === "email");
  assert.deepEqual(email.variables, ["contact_first_name", "code"]);
  assert.equal(email.status, "approved");
  assert.equal(body.templates.find((t: { channel: string }) => t.channel === "sms").status, "pending");
});

dbTest("GET /templates answers exists false for an unknown key and lists all without one", async () => {
  const f = await sendingFixture();
  await f.template("push", "a", { title: "T", body: "B" });
  const unknown = await (await f.get("/api/v1/templates?template_key=none")).json();
  assert.deepEqual(unknown, {
    template_key: "none",
    exists: false,
    channels: [],
    templates: [],
    total: 0,
    page: 1,
    limit: 500,
    totalPages: 0,
  });
  const all = await (await f.get("/api/v1/templates")).json();
  assert.equal(all.templates.length, 1);
  const other = await sendingFixture();
  const theirs = await (await other.get("/api/v1/templates?template_key=a")).json();
  assert.equal(theirs.exists, false);
});

dbTest("GET /templates pages the team's templates with page and limit, and says how many there are", async () => {
  const f = await sendingFixture();
  for (const key of ["a", "b", "c"]) await f.template("sms", key, { body: "B" });
  await f.template("email", "b", { subject: "S", html: "H" });
  const keysOf = (body: { templates: { key: string; channel: string }[] }) =>
    body.templates.map((t) => `${t.key}/${t.channel}`);
  const first = await (await f.get("/api/v1/templates?limit=3")).json();
  assert.deepEqual(keysOf(first), ["a/sms", "b/email", "b/sms"]);
  assert.deepEqual([first.total, first.page, first.limit, first.totalPages], [4, 1, 3, 2]);
  const second = await (await f.get("/api/v1/templates?limit=3&page=2")).json();
  assert.deepEqual([keysOf(second), second.total], [["c/sms"], 4], "the last page counts from its offset");
  const past = await (await f.get("/api/v1/templates?limit=3&page=3")).json();
  assert.deepEqual([keysOf(past), past.total, past.totalPages], [[], 4, 2], "past the end, the rows are counted");
  const sms = await (await f.get("/api/v1/templates?channel=sms&limit=2&page=2")).json();
  assert.deepEqual([keysOf(sms), sms.total], [["c/sms"], 3]);
  for (const query of ["limit=0", "limit=501", "page=0", "limit=x"]) {
    assert.equal((await f.get(`/api/v1/templates?${query}`)).status, 400, query);
  }
});

dbTest("GET /templates?template_key= over 200 characters is 400; up to 200 it is looked up", async () => {
  const f = await sendingFixture();
  const key = "k".repeat(MAX_KEY_LENGTH);
  await f.template("sms", key, { body: "Hi" });
  const found = await (await f.get(`/api/v1/templates?template_key=${key}`)).json();
  assert.deepEqual(found.channels, ["sms"]);
  const over = await f.get(`/api/v1/templates?template_key=${key}x`);
  assert.equal(over.status, 400);
  assert.deepEqual((await over.json()).message, [`template_key must be at most ${MAX_KEY_LENGTH} characters`]);
});
