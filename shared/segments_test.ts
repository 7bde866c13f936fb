import assert from "node:assert/strict";
import { findSegment, upsertSegment } from "./segments.ts";
import { dbTest, testDeps, testTeam } from "./testing.ts";

dbTest("upsertSegment() creates then replaces a segment that findSegment() reads back", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const created = await upsertSegment(deps.sql, team.id, "vip", { name: "VIP", filter: { tags_all: ["vip"] } });
  assert.deepEqual([created.id, created.team_id, created.name, created.filter], ["vip", team.id, "VIP", {
    tags_all: ["vip"],
  }]);
  const replaced = await upsertSegment(deps.sql, team.id, "vip", {
    name: "Active VIP",
    filter: { tags_any: ["a", "b"], is_active: true },
  });
  assert.equal(replaced.created_at.getTime(), created.created_at.getTime());
  const found = await findSegment(deps.sql, team.id, "vip");
  assert.deepEqual([found?.name, found?.filter], ["Active VIP", { tags_any: ["a", "b"], is_active: true }]);
});

dbTest("findSegment() sees only the team's own segments", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const { team: other } = await testTeam(deps);
  await upsertSegment(deps.sql, team.id, "mine", { name: "Mine", filter: {} });
  assert.equal(await findSegment(deps.sql, other.id, "mine"), undefined);
  assert.equal(await findSegment(deps.sql, team.id, "missing"), undefined);
  assert.equal((await findSegment(deps.sql, team.id, "mine"))?.name, "Mine");
});
