/** The database a DATABASE_URL run uses, and the team the scenarios act as. */
import postgres from "postgres";
import { parseConfig } from "../shared/config.ts";
import { connectDatabase } from "../shared/db.ts";
import { migrate } from "../shared/migrate.ts";
import { createTeam } from "../shared/teams.ts";
import type { BenchContext } from "./scenarios.ts";

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** A fresh database on the DATABASE_URL server, dropped by `drop()`. */
export async function createDatabase(baseUrl: string): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  const name = `bench_${randomHex(6)}`;
  const admin = postgres(baseUrl, { max: 1, onnotice: () => {} });
  await admin`create database ${admin(name)}`;
  await admin.end();
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const sql = postgres(baseUrl, { max: 1, onnotice: () => {} });
      try {
        await sql`drop database if exists ${sql(name)} with (force)`;
      } finally {
        await sql.end();
      }
    },
  };
}

/** Creates the bench team through the admin API; undefined when that API is not there yet. */
export async function teamViaAdmin(url: string, token: string, name: string) {
  const res = await fetch(`${url}/admin/v1/teams`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name, plan: "enterprise" }),
  });
  const text = await res.text();
  if (res.status === 404) return undefined;
  if (res.status !== 201) throw new Error(`POST /admin/v1/teams answered ${res.status}: ${text}`);
  return JSON.parse(text) as Pick<BenchContext, "team" | "keys">;
}

/** Creates the bench team straight in the database (while the service is stopped, for PGlite). */
export async function teamViaDatabase(env: Record<string, string>, name: string) {
  const config = parseConfig(env);
  const db = await connectDatabase(config);
  try {
    await migrate(db.sql);
    return await createTeam(db.sql, config, { name, plan: "enterprise" });
  } finally {
    await db.close();
  }
}
