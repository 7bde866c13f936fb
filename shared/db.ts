import { once } from "node:events";
import { connect } from "node:net";
import postgres from "postgres";
import type { Config } from "./config.ts";

/** A postgres.js connection pool. */
export type Sql = postgres.Sql;
/** What a query function runs on: the pool or a transaction. */
export type Db = postgres.Sql | postgres.TransactionSql;

/** An open database and how to close it (and the embedded server, if any). */
export interface Database {
  sql: Sql;
  /** "pglite" when the embedded Postgres serves it, else "postgres". */
  kind: "pglite" | "postgres";
  close(): Promise<void>;
}

interface ConnectOptions {
  /** Pool size for a real server. */
  max?: number;
  /** Schema to create and use (tests run each suite in a fresh one). */
  schema?: string;
}

const TYPES = {
  // int8 (bigint) as a JS number: our counters and micro-dollar amounts fit in 2^53.
  bigint: {
    to: 20,
    from: [20],
    serialize: (x: number | bigint) => x.toString(),
    parse: (x: string) => Number(x),
  },
};

/**
 * Connects to `DATABASE_URL`, or starts the embedded Postgres (PGlite) and bridges it to
 * postgres.js over a loopback socket, so there is one SQL dialect and one data-access path.
 */
export async function connectDatabase(config: Config, options: ConnectOptions = {}): Promise<Database> {
  const connection = options.schema ? { search_path: options.schema } : undefined;
  if (config.DATABASE_URL) {
    if (options.schema) {
      const admin = postgres(config.DATABASE_URL, { max: 1, onnotice: () => {} });
      await admin`create schema if not exists ${admin(options.schema)}`;
      await admin.end();
    }
    const sql = postgres(config.DATABASE_URL, {
      max: options.max ?? 10,
      onnotice: () => {},
      types: TYPES,
      connection,
    });
    return { sql, kind: "postgres", close: () => sql.end({ timeout: 5 }) };
  }
  return await startEmbedded(config.PGLITE_DIR, connection);
}

async function startEmbedded(dir: string, connection?: Record<string, string>): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  if (!dir.startsWith("memory://")) await Deno.mkdir(dir, { recursive: true });
  const pglite = await PGlite.create(dir);
  const server = new PGLiteSocketServer({ db: pglite, port: 0, host: "127.0.0.1" });
  await server.start();
  const port = Number(String(server.getServerConn()).split(":").pop());
  const sql = postgres({
    host: "127.0.0.1",
    port,
    user: "postgres",
    database: "postgres",
    // PGlite is single-connection: one socket, queries queue on it.
    max: 1,
    onnotice: () => {},
    types: TYPES,
    connection,
    ...safeTransactions(port),
  });
  if (connection?.search_path) {
    await sql`create schema if not exists ${sql(connection.search_path)}`;
  }
  return {
    sql,
    kind: "pglite",
    async close() {
      await sql.end({ timeout: 5 });
      await server.stop();
      await pglite.close();
    },
  };
}

/**
 * postgres.js 3.4.9 can send a transaction's BEGIN without keeping the connection for it when the
 * BEGIN fills the connection's pipeline (100 queries) or meets a socket whose buffer is full
 * (porsager/postgres#1189, #823; fixes proposed, not released): the transaction's queries then throw
 * a TypeError nothing catches, which ends the process, and the connection stays inside the open
 * transaction, so unrelated queries run in it. Also, a full socket's 'drain' hands a connection back
 * to the pool in the middle of a transaction. With PGlite's one connection, a burst of deliveries
 * meets both. So for PGlite: no limit to the pipeline, and a socket that takes every write (the bytes
 * queue in memory, as the queries would in the pool) and so never drains.
 */
function safeTransactions(port: number): Record<string, unknown> {
  return {
    max_pipeline: Number.MAX_SAFE_INTEGER,
    socket: async () => {
      const socket = connect(port, "127.0.0.1");
      await once(socket, "connect");
      const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
      socket.write = ((...args: unknown[]) => {
        write(...args);
        return true;
      }) as typeof socket.write;
      const on = socket.on.bind(socket);
      socket.on =
        ((event: string, listener: (...args: unknown[]) => void) =>
          event === "drain" ? socket : on(event, listener)) as typeof socket.on;
      return socket;
    },
  };
}

/** Marks a free-form object as a JSON parameter (for jsonb columns). */
export function asJson(value: unknown): postgres.JSONValue {
  return value as postgres.JSONValue;
}
