import assert from "node:assert/strict";
import { dbTest, randomEmail, testTeam } from "../../shared/testing.ts";
import { dashboardFixture, testUser } from "./testing.ts";

dbTest("an owner invites a member, whose password is shown once and signs in", async () => {
  const { owner, team, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const page = await v.get("/dashboard/team");
  assert.equal(page.status, 200);
  assert.ok(page.html.includes(owner.email));
  assert.match(page.html, /<label for="invite-email">Email<\/label>/);
  const email = randomEmail("invited");
  const invited = await v.post("/dashboard/team", { email, role: "member" });
  assert.equal(invited.status, 201);
  const password = /id="new-password">([^<]+)</.exec(invited.html)?.[1];
  assert.ok(password && password.length >= 20, invited.html);
  assert.ok(!(await v.get("/dashboard/team")).html.includes(password));
  const newcomer = visitor();
  const home = await newcomer.signIn(email, password);
  assert.equal(home.status, 200);
  assert.ok(home.html.includes(team.name));
  assert.ok(home.html.includes("(member)"));
});

dbTest("inviting an email that has an account answers 409, a bad email 400", async () => {
  const { owner, member, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const dup = await v.post("/dashboard/team", { email: member.email, role: "member" });
  assert.equal(dup.status, 409);
  assert.match(dup.html, /already exists/);
  assert.equal((await v.post("/dashboard/team", { email: "nope", role: "member" })).status, 400);
  assert.equal((await v.post("/dashboard/team", { email: randomEmail(), role: "admin" })).status, 400);
});

dbTest("a member cannot reach the team page or invite anyone (403)", async () => {
  const { deps, team, member, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(member.email);
  const page = await v.get("/dashboard/team");
  assert.equal(page.status, 403);
  assert.match(page.html, /Only an owner/);
  const email = randomEmail("sneaky");
  assert.equal((await v.post("/dashboard/team", { email, role: "owner" })).status, 403);
  const rows = await deps.sql`select 1 from dashboard_users where team_id = ${team.id} and email = ${email}`;
  assert.equal(rows.length, 0);
});

dbTest("one team's owner never sees another team's people, and invites only into their own team", async () => {
  const { deps, owner, member, visitor } = await dashboardFixture();
  const other = await testTeam(deps);
  const stranger = await testUser(deps, other.team.id, "owner");
  const v = visitor();
  const page = await (async () => {
    await v.signIn(stranger.email);
    return await v.get("/dashboard/team");
  })();
  assert.ok(page.html.includes(stranger.email));
  assert.ok(!page.html.includes(owner.email) && !page.html.includes(member.email));
  assert.match(page.html, /You are the only one here so far/);
  const email = randomEmail("theirs");
  assert.equal((await v.post("/dashboard/team", { email, role: "member" })).status, 201);
  const [row] = await deps.sql`select team_id from dashboard_users where email = ${email}`;
  assert.equal(row.team_id, other.team.id);
});
