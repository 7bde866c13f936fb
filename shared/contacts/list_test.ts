import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { createContacts } from "./bulk.ts";
import { contactSearchText, listContacts } from "./list.ts";

dbTest("a search by part of a field finds it in each of the four fields, and never across two", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  await createContacts(deps.sql, team.id, [
    { email: "ada@lovelace.example", first_name: "Ada", last_name: "Lovelace", external_id: "crm-17" },
    { email: "grace@hopper.example", first_name: "Grace", last_name: "Hopper" },
  ]);
  const search = async (text: string) =>
    (await listContacts(deps.sql, team.id, { limit: 10, filters: { search: text } })).data.map((c) => c.email);
  assert.deepEqual(await search("LOVEL"), ["ada@lovelace.example"]);
  assert.deepEqual(await search("rac"), ["grace@hopper.example"]);
  assert.deepEqual(await search("m-1"), ["ada@lovelace.example"]);
  assert.deepEqual(await search("hopper.ex"), ["grace@hopper.example"]);
  // The fields are joined for the index; a term spanning last name and email is not a match.
  assert.deepEqual(await search("lovelace\nada"), []);
  assert.deepEqual(await search("ace ada"), []);
});

dbTest(
  "the search expression is the one the trigram index holds (migration 027), so the planner can use it",
  async () => {
    const deps = await testDeps();
    const plan = await deps.sql.begin(async (tx) => {
      // Off, so that the tiny test table's cheaper sequential scan does not hide whether the index fits
      // (on 100,000 contacts of a team the planner picks it by itself: docs/performance.md).
      await tx`set local enable_seqscan = off`;
      const rows = await tx`explain select id from contacts where ${contactSearchText(tx)} ilike ${"%irst12%"}`;
      return rows.map((r) => Object.values(r)[0]).join("\n");
    });
    assert.match(plan, /contacts_search_trgm/);
  },
);
