import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, testDeps, testTeam } from "../../shared/testing.ts";

const ADMIN = { Authorization: "Bearer test-admin-token-0123456789" };

dbTest(
  "admin contact-tokens: POST turns them on with a new secret each call, GET tells, DELETE turns off",
  async () => {
    const deps = await testDeps();
    const app = createService(deps);
    const { team } = await testTeam(deps);
    const path = `/admin/v1/teams/${team.id}/contact-tokens`;
    const state = async () => (await (await app.request(path, { headers: ADMIN })).json()).enabled;
    assert.equal(await state(), false);
    const first = await app.request(path, { method: "POST", headers: ADMIN });
    assert.equal(first.status, 201);
    const body = await first.json();
    assert.deepEqual(Object.keys(body).sort(), ["enabled", "header", "secret"]);
    assert.equal(body.enabled, true);
    assert.equal(body.header, "X-Contact-Token");
    assert.match(body.secret, /^cts_[0-9A-Za-z]{40}$/);
    assert.equal(await state(), true);
    const second = await (await app.request(path, { method: "POST", headers: ADMIN })).json();
    assert.notEqual(second.secret, body.secret);
    const off = await app.request(path, { method: "DELETE", headers: ADMIN });
    assert.deepEqual([off.status, await off.json()], [200, { enabled: false }]);
    assert.equal(await state(), false);
  },
);

dbTest("admin contact-tokens: unknown team 404, no admin token 401", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { team } = await testTeam(deps);
  for (const method of ["POST", "GET", "DELETE"]) {
    const unknown = await app.request(`/admin/v1/teams/${crypto.randomUUID()}/contact-tokens`, {
      method,
      headers: ADMIN,
    });
    assert.equal(unknown.status, 404, method);
    assert.equal((await unknown.json()).message, "Team not found");
    const anonymous = await app.request(`/admin/v1/teams/${team.id}/contact-tokens`, { method });
    assert.equal(anonymous.status, 401, method);
  }
});
