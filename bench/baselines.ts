/**
 * Tiny reference servers the service is measured against, one mode per process:
 *   deno run -A bench/baselines.ts <mode>
 * Env: PORT, HOST, KV_PATH (kv modes), DATABASE_URL or PGLITE_DIR (pg modes).
 * Every mode answers GET /ready with 200 once it can serve.
 */
import { Hono } from "hono";
import { parseConfig } from "../shared/config.ts";
import { connectDatabase } from "../shared/db.ts";
import { contactBody } from "../api/contacts/schemas.ts";
import { createContact, findContact } from "../shared/contacts/queries.ts";
import { KvCommitter } from "../shared/kv.ts";
import { migrate } from "../shared/migrate.ts";
import type { RequestSpec } from "./load.ts";

/** The baseline servers every run measures, by the argument that starts them. */
export const BASELINE_MODES = ["hono", "kv-set", "kv-enqueue", "pg-insert", "pg-select"] as const;
/**
 * Servers that run the service's own contact queries (shared/contacts/queries.ts) and body
 * (contactBody) in a bare Hono handler (`--diagnose`): they split a scenario's gap to its baseline
 * into query cost (pg-select → contact-query-select) and framework cost (→ the service).
 * `kv-enqueue-grouped` is the floor of the send path's design: a bare Hono handler whose one
 * kv.enqueue goes through the service's group commit (KvCommitter), with no other work; the gap from
 * it to a send is the cost of everything a send does besides its commit.
 */
export const DIAGNOSTIC_MODES = ["contact-query-insert", "contact-query-select", "kv-enqueue-grouped"] as const;
/** The baseline each diagnostic server is compared with. */
export const DIAGNOSTIC_OF: Record<typeof DIAGNOSTIC_MODES[number], typeof BASELINE_MODES[number]> = {
  "contact-query-insert": "pg-insert",
  "contact-query-select": "pg-select",
  "kv-enqueue-grouped": "kv-enqueue",
};
/** A baseline or diagnostic server. */
export type BaselineMode = typeof BASELINE_MODES[number] | typeof DIAGNOSTIC_MODES[number];

/**
 * The mode whose process serves `mode`: pg-insert and pg-select share one (its routes and tables
 * differ), so that an embedded-Postgres run starts one more database, not two, on its 2 cores.
 */
export function serverOf(mode: BaselineMode): BaselineMode {
  return mode === "pg-select" ? "pg-insert" : mode;
}

/** Rows the pg-select table holds (GET /items/:id reads one of them). */
export const SELECT_ROWS = 1000;

/** What each baseline is called in the table. */
export const BASELINE_LABELS: Record<BaselineMode, string> = {
  "hono": "baseline: bare Hono JSON",
  "kv-set": "baseline: Hono + 1 kv.set",
  "kv-enqueue": "baseline: Hono + 1 kv.enqueue",
  "pg-insert": "baseline: Hono + 1 INSERT … RETURNING",
  "pg-select": "baseline: Hono + 1 SELECT by PK",
  "contact-query-insert": "diagnostic: Hono + createContact()",
  "contact-query-select": "diagnostic: Hono + findContact()",
  "kv-enqueue-grouped": "diagnostic: Hono + 1 group-committed kv.enqueue",
};

/** The requests a baseline is driven with, in the same form (fixed list or factory) as its scenarios. */
export function baselineRequests(mode: BaselineMode, runId: string): RequestSpec[] | ((seq: number) => RequestSpec) {
  const body = (seq: number) => ({ email: `base-${runId}-${seq}@example.com`, first_name: "Bench" });
  switch (mode) {
    case "hono":
      return [{ method: "GET", path: "/" }];
    case "kv-set":
      return (seq) => ({ method: "POST", path: "/kv", body: body(seq) });
    case "kv-enqueue":
    case "kv-enqueue-grouped":
      return (seq) => ({ method: "POST", path: "/enqueue", body: body(seq) });
    case "pg-insert":
    case "contact-query-insert":
      return (seq) => ({ method: "POST", path: "/items", body: body(seq) });
    case "pg-select":
    case "contact-query-select":
      return Array.from({ length: 100 }, (_, n) => ({ method: "GET", path: `/items/${uuidFor(n * 7)}` }));
  }
}

function uuidFor(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

async function buildApp(mode: BaselineMode): Promise<{ app: Hono; close: () => Promise<void> }> {
  const app = new Hono();
  app.get("/ready", (c) => c.json({ ok: true }));
  switch (mode) {
    case "hono": {
      app.get("/", (c) => c.json({ hello: "world", at: new Date() }));
      return { app, close: () => Promise.resolve() };
    }
    case "kv-set":
    case "kv-enqueue": {
      const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
      app.post("/kv", async (c) => {
        const body = await c.req.json();
        const id = crypto.randomUUID();
        await kv.set(["bench", id], body);
        return c.json({ id }, 201);
      });
      app.post("/enqueue", async (c) => {
        const body = await c.req.json();
        const res = await kv.enqueue(body);
        return c.json({ ok: res.ok }, 201);
      });
      return { app, close: () => Promise.resolve(kv.close()) };
    }
    case "kv-enqueue-grouped": {
      const kv = await Deno.openKv(Deno.env.get("KV_PATH"));
      const committer = new KvCommitter(kv);
      app.post("/enqueue", async (c) => {
        const body = await c.req.json();
        await committer.commit((op) => op.enqueue(body));
        return c.json({ ok: true }, 201);
      });
      return { app, close: () => Promise.resolve(kv.close()) };
    }
    case "pg-insert":
    case "pg-select": {
      // One process serves both pg baselines (see serverOf): one embedded Postgres to start, not two.
      const db = await connectDatabase(parseConfig(Deno.env.toObject()));
      const sql = db.sql;
      for (const name of ["bench_inserted", "bench_selected"]) {
        await sql`create table if not exists ${sql(name)} (
          id uuid primary key,
          email text not null,
          first_name text,
          created_at timestamptz(3) not null default now()
        )`;
      }
      const rows = Array.from({ length: SELECT_ROWS }, (_, n) => ({ id: uuidFor(n), email: `row${n}@example.com` }));
      await sql`insert into bench_selected ${sql(rows, "id", "email")} on conflict do nothing`;
      app.post("/items", async (c) => {
        const body = await c.req.json<{ email: string; first_name?: string }>();
        const [row] = await sql`
          insert into bench_inserted ${
          sql({ id: crypto.randomUUID(), email: body.email, first_name: body.first_name ?? null })
        }
          returning id, email, first_name, created_at`;
        return c.json(row, 201);
      });
      app.get("/items/:id", async (c) => {
        const [row] = await sql`select id, email, first_name, created_at from bench_selected where id = ${
          c.req.param("id")
        }`;
        return row ? c.json(row) : c.json({ error: "not found" }, 404);
      });
      return { app, close: () => db.close() };
    }
    case "contact-query-insert":
    case "contact-query-select": {
      const db = await connectDatabase(parseConfig(Deno.env.toObject()));
      const sql = db.sql;
      await migrate(sql);
      const [team]: [{ id: string }] = await sql`
        insert into teams ${sql({ name: `diagnostic ${mode}`, plan: "enterprise" })} returning id`;
      if (mode === "contact-query-select") {
        const rows = Array.from({ length: SELECT_ROWS }, (_, n) => ({
          id: uuidFor(n),
          team_id: team.id,
          email: `diag${n}@example.com`,
          external_id: `auto_gen_${crypto.randomUUID()}`,
          first_name: "Reader",
        }));
        await sql`insert into contacts ${sql(rows, "id", "team_id", "email", "external_id", "first_name")}`;
      }
      app.post("/items", async (c) => {
        const body = await c.req.json<{ email: string; first_name?: string }>();
        const row = await createContact(sql, team.id, { ...body, metadata: { created_via: "api_key" } });
        return c.json(contactBody(row), 201);
      });
      app.get("/items/:id", async (c) => {
        const row = await findContact(sql, team.id, { by: "id", value: c.req.param("id") });
        return row ? c.json(contactBody(row)) : c.json({ error: "not found" }, 404);
      });
      return { app, close: () => db.close() };
    }
  }
}

async function main(): Promise<void> {
  const mode = Deno.args[0] as BaselineMode;
  const modes: readonly string[] = [...BASELINE_MODES, ...DIAGNOSTIC_MODES];
  if (!modes.includes(mode)) {
    console.error(`usage: deno run -A bench/baselines.ts <${modes.join("|")}>`);
    Deno.exit(2);
  }
  const { app, close } = await buildApp(mode);
  const server = Deno.serve({
    port: Number(Deno.env.get("PORT") ?? 0),
    hostname: Deno.env.get("HOST") ?? "127.0.0.1",
    onListen: () => {},
  }, app.fetch);
  const stop = async () => {
    await server.shutdown();
    await close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

if (import.meta.main) await main();
