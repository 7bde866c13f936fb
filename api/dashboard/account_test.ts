import assert from "node:assert/strict";
import { ACCOUNT_FAILURES } from "./throttle.ts";
import { dbTest } from "../../shared/testing.ts";
import { dashboardFixture, PASSWORD, testUser } from "./testing.ts";
import { setTeamUserRole } from "./account_queries.ts";

const NEW_PASSWORD = "another long password 43";

/** The session ids the account page lists, in order. */
function sessionIds(html: string): string[] {
  return [...html.matchAll(/data-session="([0-9a-f]+)"/g)].map((m) => m[1]);
}

dbTest(
  "a user changes their password: the old one stops working, their other sessions end, this one stays",
  async () => {
    const f = await dashboardFixture();
    const here = f.visitor({ "User-Agent": "Here/1.0" });
    const there = f.visitor({ "User-Agent": "There/2.0" });
    await there.signIn(f.member.email);
    await here.signIn(f.member.email);
    const page = await here.get("/dashboard/account");
    assert.equal(page.status, 200);
    assert.equal(sessionIds(page.html).length, 2);
    assert.match(page.html, /Here\/1\.0 <strong>\(this session\)<\/strong>/);
    assert.match(page.html, /There\/2\.0/);

    const changed = await here.post("/dashboard/account/password", { current: PASSWORD, password: NEW_PASSWORD });
    assert.equal(changed.status, 200);
    assert.match(changed.html, /Your password is changed/);
    assert.equal(sessionIds(changed.html).length, 1);
    assert.equal((await here.get("/dashboard/keys")).status, 200, "this session stays");
    assert.equal((await there.get("/dashboard/keys")).status, 303, "the other one is signed out");
    assert.equal((await f.visitor().signIn(f.member.email, PASSWORD)).status, 401);
    assert.equal((await f.visitor().signIn(f.member.email, NEW_PASSWORD)).status, 200);
  },
);

dbTest("a wrong current password changes nothing and counts as a failed sign-in, up to the lock", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.member.email);
  await v.get("/dashboard/account");
  const short = await v.post("/dashboard/account/password", { current: PASSWORD, password: "short" });
  assert.equal(short.status, 400);
  for (let i = 0; i < ACCOUNT_FAILURES; i++) {
    const wrong = await v.post("/dashboard/account/password", { current: `not it ${i}`, password: NEW_PASSWORD });
    assert.equal(wrong.status, 401);
    assert.match(wrong.html, /not your current password/);
  }
  const locked = await v.post("/dashboard/account/password", { current: PASSWORD, password: NEW_PASSWORD });
  assert.equal(locked.status, 429);
  assert.ok(locked.headers.get("retry-after"));
  // Still the old password (sign-in is locked for the account as well, by the same count).
  assert.equal((await f.visitor().signIn(f.member.email, PASSWORD)).status, 429);
});

dbTest("a user signs out one of their sessions; another user's session is not theirs to end", async () => {
  const f = await dashboardFixture();
  const laptop = f.visitor({ "User-Agent": "Laptop" });
  const phone = f.visitor({ "User-Agent": "Phone" });
  await laptop.signIn(f.owner.email);
  await phone.signIn(f.owner.email);
  const page = await laptop.get("/dashboard/account");
  const ids = sessionIds(page.html);
  assert.equal(ids.length, 2);
  const current = /data-session="([0-9a-f]+)"><td data-label="Browser">Laptop/.exec(page.html)![1];
  const other = ids.find((id) => id !== current)!;

  const member = f.visitor();
  await member.signIn(f.member.email);
  await member.get("/dashboard/account");
  assert.equal((await member.post(`/dashboard/account/sessions/${other}/sign-out`)).status, 404);
  assert.equal((await phone.get("/dashboard/keys")).status, 200);

  const ended = await laptop.post(`/dashboard/account/sessions/${other}/sign-out`);
  assert.equal(ended.status, 200);
  assert.match(ended.html, /That session is signed out/);
  assert.equal((await phone.get("/dashboard/keys")).status, 303);
  // Ending this session signs out here.
  const self = await laptop.post(`/dashboard/account/sessions/${current}/sign-out`);
  assert.equal(self.status, 303);
  assert.equal(self.headers.get("location"), "/dashboard/sign-in");
  assert.equal((await laptop.get("/dashboard/keys")).status, 303);
});

dbTest("account forms need the session's token", async () => {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(f.member.email);
  v.csrf = "forged";
  assert.equal(
    (await v.post("/dashboard/account/password", { current: PASSWORD, password: NEW_PASSWORD })).status,
    403,
  );
  assert.equal((await f.visitor().signIn(f.member.email, PASSWORD)).status, 200, "unchanged");
});

dbTest("an owner changes a person's role and removes them; their sessions end at once", async () => {
  const f = await dashboardFixture();
  const owner = f.visitor();
  await owner.signIn(f.owner.email);
  const member = f.visitor();
  await member.signIn(f.member.email);
  assert.equal((await member.get("/dashboard/team")).status, 403);

  await owner.get("/dashboard/team");
  assert.equal((await owner.post(`/dashboard/team/users/${f.member.id}/role`, { role: "owner" })).status, 303);
  assert.equal((await member.get("/dashboard/team")).status, 200, "an owner from the next request");
  assert.equal((await owner.post(`/dashboard/team/users/${f.member.id}/role`, { role: "member" })).status, 303);
  assert.equal((await member.get("/dashboard/team")).status, 403);

  assert.equal((await owner.post(`/dashboard/team/users/${f.member.id}/remove`)).status, 303);
  assert.equal((await member.get("/dashboard/keys")).status, 303, "signed out at once");
  assert.equal((await f.visitor().signIn(f.member.email)).status, 401);
  assert.ok(!(await owner.get("/dashboard/team")).html.includes(f.member.email));
});

dbTest("the last owner stays; owners do not change themselves; members and other teams get nothing", async () => {
  const f = await dashboardFixture();
  const other = await dashboardFixture();
  const second = await testUser(f.deps, f.team.id, "owner");
  const owner = f.visitor();
  await owner.signIn(f.owner.email);
  await owner.get("/dashboard/team");
  // Their own row has no buttons, and a crafted post about themselves is not found.
  assert.equal((await owner.post(`/dashboard/team/users/${f.owner.id}/remove`)).status, 404);
  assert.equal((await owner.post(`/dashboard/team/users/${f.owner.id}/role`, { role: "member" })).status, 404);
  // Another team's person: not found, and unchanged.
  assert.equal((await owner.post(`/dashboard/team/users/${other.member.id}/remove`)).status, 404);
  assert.equal((await owner.post(`/dashboard/team/users/${other.member.id}/role`, { role: "owner" })).status, 404);
  assert.equal((await other.visitor().signIn(other.member.email)).status, 200);
  // Two owners: one may go; then the one left stays.
  assert.equal((await owner.post(`/dashboard/team/users/${second.id}/role`, { role: "member" })).status, 303);
  const by = f.visitor();
  await by.signIn(second.email);
  assert.equal((await by.get("/dashboard/team")).status, 403);
  const member = f.visitor();
  await member.signIn(f.member.email);
  assert.equal((await member.post(`/dashboard/team/users/${f.owner.id}/remove`)).status, 403);
  assert.equal((await member.post(`/dashboard/team/users/${f.owner.id}/role`, { role: "member" })).status, 403);
});

dbTest("two owners demoting each other at once: one of them stays an owner", async () => {
  const f = await dashboardFixture();
  const second = await testUser(f.deps, f.team.id, "owner");
  const results = await Promise.all([
    setTeamUserRole(f.deps.sql, f.team.id, f.owner.id, "member"),
    setTeamUserRole(f.deps.sql, f.team.id, second.id, "member"),
  ]);
  assert.deepEqual(results.filter((r) => r === undefined).length, 1);
  assert.ok(results.includes("last_owner"));
  const [owners] = await f.deps.sql<{ n: number }[]>`
    select count(*)::int as n from dashboard_users where team_id = ${f.team.id} and role = 'owner'`;
  assert.equal(owners.n, 1);
});
