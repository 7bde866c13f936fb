import assert from "node:assert/strict";
import { migrate, readMigrations } from "../migrate.ts";
import { dbTest, randomEmail, testRuntime, testTeam } from "../testing.ts";
import { createContact, findContactByEmail } from "./queries.ts";

dbTest("migrate() run again on a migrated database applies nothing and changes nothing", async () => {
  const { deps } = await testRuntime();
  const sql = deps.sql;
  const { team } = await testTeam(deps);
  const contact = await createContact(sql, team.id, { email: randomEmail(), tags: ["kept"] });
  const snapshot = async () => ({
    migrations: await sql`select version, name, applied_at from schema_migrations order by version`,
    columns: await sql`
      select table_name, column_name, data_type, column_default, is_nullable from information_schema.columns
      where table_schema = current_schema() order by table_name, ordinal_position`,
    indexes: await sql`select indexname, indexdef from pg_indexes where schemaname = current_schema() order by 1`,
    contacts: await sql`select count(*)::int as n from contacts`,
  });
  const before = await snapshot();
  assert.deepEqual(await migrate(sql), []);
  assert.deepEqual(await migrate(sql), []);
  assert.deepEqual(await snapshot(), before);
  assert.equal(before.migrations.length, (await readMigrations()).length);
  assert.deepEqual((await findContactByEmail(sql, team.id, contact.email.toUpperCase()))?.tags, ["kept"]);
});
