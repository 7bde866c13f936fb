import { once } from "node:events";
import { connect } from "node:net";
import { Duplex } from "node:stream";
import type postgresJs from "postgres";
// The service's pool runs on a patched copy of postgres.js that survives its server going away (see its README).
import patchedPostgres from "./vendor/postgres/src/index.js";

/** postgres.js (the patched copy), typed as the npm package it is a copy of. */
const postgres = patchedPostgres as unknown as typeof postgresJs;
import type { Config } from "./config.ts";

/** A postgres.js connection pool. */
export type Sql = postgresJs.Sql;
/** What a query function runs on: the pool or a transaction. */
export type Db = postgresJs.Sql | postgresJs.TransactionSql;

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
      ...safeTransactions(plainTcpAddress(config.DATABASE_URL)),
    });
    return { sql, kind: "postgres", close: () => sql.end({ timeout: 5 }) };
  }
  return await startEmbedded(config.PGLITE_DIR, connection);
}

async function startEmbedded(dir: string, connection?: Record<string, string>): Promise<Database> {
  const { PGlite } = await import("@electric-sql/pglite");
  // Contact search's trigram index (migration 027): PGlite ships pg_trgm as an extension to load.
  const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm");
  const { PGLiteSocketServer } = await import("@electric-sql/pglite-socket");
  if (!dir.startsWith("memory://")) await Deno.mkdir(dir, { recursive: true });
  const pglite = await PGlite.create(dir, { extensions: { pg_trgm } });
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
    ...safeTransactions({ host: "127.0.0.1", port }),
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
 * a TypeError nothing catches, which ends the process, or fail UNSAFE_TRANSACTION, and the connection
 * stays inside the open transaction, so unrelated queries run in it. Also, a full socket's 'drain'
 * hands a connection back to the pool in the middle of a transaction. PGlite's one connection meets
 * both in a burst of deliveries. So: no limit to the pipeline and, where we can open the socket
 * ourselves (`address`), one that takes every write (the bytes queue in memory, as the queries
 * would in the pool) and so never drains.
 */
function safeTransactions(address?: { host: string; port: number }): Record<string, unknown> {
  const unlimited = { max_pipeline: Number.MAX_SAFE_INTEGER };
  if (!address) return unlimited;
  return {
    ...unlimited,
    socket: async () => {
      const socket = connect(address.port, address.host);
      try {
        await once(socket, "connect", { signal: AbortSignal.timeout(CONNECT_TIMEOUT_MS) });
      } catch (err) {
        socket.destroy();
        return failedSocket(err);
      }
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

/** postgres.js's own connect_timeout (30 s), for the sockets we open. */
const CONNECT_TIMEOUT_MS = 30_000;

/**
 * A stand-in for a socket that could not connect, failing with `err` once postgres.js has taken
 * it. Thrown from the socket factory, the error would leave postgres.js's connection "connecting"
 * for good (it never closes it), so with the server away for a while every connection of the pool
 * ended stuck and every query waited forever, the server back or not. The failure waits until
 * postgres.js has written its startup message (on a setImmediate): a connection closed with that
 * write pending never writes again (its write timer is cleared, not reset), and would hang instead.
 */
function failedSocket(err: unknown): Duplex {
  const standIn = new Duplex({
    read() {},
    write(_chunk, _encoding, done) {
      done();
    },
  });
  setTimeout(() => standIn.destroy(err instanceof Error ? err : new Error(String(err))), FAILED_SOCKET_DELAY_MS);
  return standIn;
}

/** Well after postgres.js's first write on a new socket (the next turn of the event loop). */
const FAILED_SOCKET_DELAY_MS = 20;

/**
 * The one TCP host and port of a server URL without TLS, where our socket can stand in for
 * postgres.js's; undefined for TLS, a Unix socket or several hosts (postgres.js opens those itself).
 */
export function plainTcpAddress(url: string): { host: string; port: number } | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const ssl = parsed.searchParams.get("sslmode") ?? parsed.searchParams.get("ssl");
  if (ssl !== null && ssl !== "disable" && ssl !== "false") return undefined;
  if (!parsed.hostname || parsed.searchParams.has("host")) return undefined;
  return { host: parsed.hostname.replace(/^\[(.*)\]$/, "$1"), port: Number(parsed.port || 5432) };
}

/** Marks a free-form object as a JSON parameter (for jsonb columns). */
export function asJson(value: unknown): postgresJs.JSONValue {
  return value as postgresJs.JSONValue;
}
