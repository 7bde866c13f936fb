import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, jsonRequest, randomEmail, testDeps, testTeam } from "../../shared/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };

async function setup() {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  return { deps, team, app: createService(deps) };
}

dbTest("POST /admin/v1/teams/{team_id}/users creates a user and never shows or stores the password", async () => {
  const { app, deps, team } = await setup();
  const email = randomEmail("owner");
  const res = await app.request(
    `/admin/v1/teams/${team.id}/users`,
    jsonRequest("POST", { email, password: "a long enough password", role: "owner" }, TOKEN),
  );
  assert.equal(res.status, 201);
  const body = await res.json();
  assert.deepEqual(Object.keys(body).sort(), ["created_at", "email", "id", "role", "team_id"]);
  assert.equal(body.email, email);
  assert.equal(body.role, "owner");
  assert.equal(body.team_id, team.id);
  const [row] = await deps.sql`select password_hash from dashboard_users where id = ${body.id}`;
  assert.match(row.password_hash, /^\$argon2id\$/);
  assert.ok(!row.password_hash.includes("a long enough password"));
});

dbTest(
  "POST /admin/v1/teams/{team_id}/users answers 409 for an email that has an account, whatever its case",
  async () => {
    const { app, team } = await setup();
    const email = randomEmail("dup");
    const create = (address: string) =>
      app.request(
        `/admin/v1/teams/${team.id}/users`,
        jsonRequest("POST", { email: address, password: "a long enough password", role: "member" }, TOKEN),
      );
    assert.equal((await create(email)).status, 201);
    const again = await create(email.toUpperCase());
    assert.equal(again.status, 409);
    assert.equal((await again.json()).code, "user_exists");
  },
);

dbTest(
  "POST /admin/v1/teams/{team_id}/users answers 400 for a weak password or a bad role, 404 for an unknown team",
  async () => {
    const { app, team } = await setup();
    const post = (teamId: string, body: unknown) =>
      app.request(`/admin/v1/teams/${teamId}/users`, jsonRequest("POST", body, TOKEN));
    const weak = await post(team.id, { email: randomEmail(), password: "short pass1", role: "owner" });
    assert.equal(weak.status, 400);
    assert.equal((await weak.json()).statusCode, 400);
    assert.equal(
      (await post(team.id, { email: randomEmail(), password: "a long enough password", role: "admin" })).status,
      400,
    );
    assert.equal(
      (await post(team.id, { email: "not-an-email", password: "a long enough password", role: "owner" })).status,
      400,
    );
    const unknown = await post(crypto.randomUUID(), {
      email: randomEmail(),
      password: "a long enough password",
      role: "owner",
    });
    assert.equal(unknown.status, 404);
  },
);

dbTest("POST /admin/v1/teams/{team_id}/users requires the admin token", async () => {
  const { app, team } = await setup();
  const res = await app.request(
    `/admin/v1/teams/${team.id}/users`,
    jsonRequest("POST", { email: randomEmail(), password: "a long enough password", role: "owner" }),
  );
  assert.equal(res.status, 401);
});
