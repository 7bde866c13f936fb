import assert from "node:assert/strict";
import { connectDatabase } from "./db.ts";
import { migrate, readMigrations } from "./migrate.ts";
import { dbTest, testConfig } from "./testing.ts";

dbTest("migrate() run at once by two starts on one empty database applies each migration once", async () => {
  const config = testConfig();
  const schema = config.DATABASE_URL
    ? `test_migrate_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`
    : undefined;
  // On a server: two processes' pools on one empty schema (api/main.ts and worker/main.ts started
  // together), which only the advisory lock keeps apart. On PGlite the database belongs to one process
  // and one connection, so there is no second process to lock out: two calls in it, which would both
  // apply a migration if a call read what is applied outside the transaction that applies it.
  const first = await connectDatabase(config, { schema });
  const second = schema ? await connectDatabase(config, { schema }) : first;
  try {
    const applied = await Promise.all([migrate(first.sql), migrate(second.sql)]);
    const versions = (await readMigrations()).map((m) => m.version);
    assert.deepEqual([...applied[0], ...applied[1]].sort((a, b) => a - b), versions);
    const rows = await first.sql`select version from schema_migrations order by version`;
    assert.deepEqual(rows.map((r) => r.version), versions);
  } finally {
    if (schema) await first.sql`drop schema ${first.sql(schema)} cascade`;
    if (second !== first) await second.close();
    await first.close();
  }
});
