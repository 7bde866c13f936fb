import assert from "node:assert/strict";
import { countingDb, dbTest, randomEmail, testDeps, testTeam } from "../testing.ts";
import { ContactFinder } from "./finder.ts";
import { createContact } from "./queries.ts";

dbTest("ContactFinder answers concurrent look-ups of several teams right, in one query per team", async () => {
  const deps = await testDeps();
  const [a, b] = [(await testTeam(deps)).team, (await testTeam(deps)).team];
  const made = await Promise.all(
    Array.from(
      { length: 30 },
      (_, i) => createContact(deps.sql, i % 2 ? a.id : b.id, { email: randomEmail(), external_id: `ext-${i}` }),
    ),
  );
  const { db, statements } = countingDb(deps.sql);
  const finder = new ContactFinder(db);
  const asked = Array.from({ length: 30 }, (_, i) => ({ team: i % 2 ? a.id : b.id, id: `ext-${i}` }));
  // Another team's id and an unknown id find nothing.
  asked.push({ team: a.id, id: "ext-0" }, { team: b.id, id: "ext-missing" });
  const found = await Promise.all(asked.map((q) => finder.byExternalId(q.team, q.id)));
  for (let i = 0; i < 30; i++) assert.equal(found[i]?.id, made[i].id, `look-up ${i}`);
  assert.equal(found[30], undefined);
  assert.equal(found[31], undefined);
  assert.equal(statements(), 2, "one query per team");
});

dbTest("ContactFinder: a look-up Postgres refuses fails alone; the others of its group are answered", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const contact = await createContact(deps.sql, team.id, { email: randomEmail(), external_id: "fine" });
  const finder = new ContactFinder(deps.sql);
  const [good, bad, none] = await Promise.allSettled([
    finder.byExternalId(team.id, "fine"),
    finder.byExternalId(team.id, "bad\u0000id"),
    finder.byExternalId(team.id, "nobody"),
  ]);
  assert.equal(good.status === "fulfilled" && good.value?.id, contact.id);
  assert.equal(bad.status, "rejected");
  assert.deepEqual(none, { status: "fulfilled", value: undefined });
});
