import type { Sql } from "./db.ts";

const MIGRATIONS_DIR = new URL("./migrations/", import.meta.url);
/** Advisory lock of the migrations (the demo seed holds 72640014). */
const MIGRATION_LOCK = 72640013;

/** A numbered SQL file under shared/migrations. */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** Reads the migrations in version order. */
export async function readMigrations(): Promise<Migration[]> {
  const migrations: Migration[] = [];
  for await (const entry of Deno.readDir(MIGRATIONS_DIR)) {
    const match = /^(\d+)_([\w-]+)\.sql$/.exec(entry.name);
    if (!entry.isFile || !match) continue;
    const text = await Deno.readTextFile(new URL(entry.name, MIGRATIONS_DIR));
    migrations.push({ version: Number(match[1]), name: match[2], sql: text });
  }
  return migrations.sort((a, b) => a.version - b.version);
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, each in its own transaction,
 * under an advisory lock so that processes starting together apply each one once.
 * Returns the versions applied now.
 */
export async function migrate(sql: Sql): Promise<number[]> {
  const migrations = await readMigrations();
  const applied: number[] = [];
  // Under the lock too: two `create table if not exists` at once can both try to create it, and the
  // second fails on Postgres's catalog (duplicate key in pg_type).
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz(3) not null default now()
    )`;
  });
  for (const m of migrations) {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK})`;
      const [done] = await tx`select 1 from schema_migrations where version = ${m.version}`;
      if (done) return;
      await tx.unsafe(m.sql);
      await tx`insert into schema_migrations ${tx({ version: m.version, name: m.name })}`;
      applied.push(m.version);
    });
  }
  return applied;
}
