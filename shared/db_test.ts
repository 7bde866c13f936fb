import assert from "node:assert/strict";
import { connectDatabase, plainTcpAddress } from "./db.ts";
import { testConfig } from "./testing.ts";

Deno.test("one connection runs transactions begun among hundreds of pipelined queries", async () => {
  // The suite's database: PGlite (one connection), or the server with a pool of one.
  const db = await connectDatabase(testConfig(), { max: 1 });
  try {
    // postgres.js 3.4.9 loses the connection of a BEGIN that fills the pipeline (100 queries) or meets a
    // full socket (porsager/postgres#1189): the transaction's queries then throw a TypeError nothing can
    // catch, and the connection stays inside that transaction.
    const n = 400;
    const answers = await Promise.all(
      Array.from(
        { length: n },
        (_, i) =>
          i % 101 === 100
            ? db.sql.begin(async (tx) => (await tx`select ${i}::int as n`)[0].n)
            : db.sql`select ${i}::int as n, repeat('x', 2000) as pad`.then((rows) => rows[0].n),
      ),
    );
    assert.deepEqual(answers, Array.from({ length: n }, (_, i) => i));
    // Outside a transaction each statement gets a transaction id of its own; inside one, they share it.
    const txid = async () => (await db.sql`select txid_current()::text as id`)[0].id;
    assert.notEqual(await txid(), await txid(), "a transaction was left open");
  } finally {
    await db.close();
  }
});

Deno.test("plainTcpAddress() is the host and port of a plain TCP URL, and nothing for TLS, a Unix socket or several hosts", () => {
  assert.deepEqual(plainTcpAddress("postgres://postgres@127.0.0.1:5432/test"), { host: "127.0.0.1", port: 5432 });
  assert.deepEqual(plainTcpAddress("postgres://u@localhost/db?sslmode=disable"), { host: "localhost", port: 5432 });
  assert.deepEqual(plainTcpAddress("postgres://u@[::1]:6543/db"), { host: "::1", port: 6543 });
  assert.equal(plainTcpAddress("postgres://u:p@db/x?sslmode=require"), undefined);
  assert.equal(plainTcpAddress("postgres://u@h1:5432,h2:5433/db"), undefined);
  assert.equal(plainTcpAddress("postgres://u@/db?host=/var/run/postgresql"), undefined);
});

/** A relay on loopback to the test server that can refuse connections and cut the ones it carries. */
class Relay {
  readonly port: number;
  #listener: Deno.Listener | undefined;
  #open = new Set<Deno.Conn>();

  constructor(private readonly server: { host: string; port: number }) {
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = (probe.addr as Deno.NetAddr).port;
    probe.close();
  }

  /** The server's URL through the relay. */
  url(): string {
    const url = new URL(Deno.env.get("DATABASE_URL")!);
    url.hostname = "127.0.0.1";
    url.port = String(this.port);
    return url.toString();
  }

  start(): void {
    const listener = this.#listener = Deno.listen({ hostname: "127.0.0.1", port: this.port });
    (async () => {
      for await (const client of listener) {
        const upstream = await Deno.connect({ hostname: this.server.host, port: this.server.port });
        this.#open.add(client).add(upstream);
        const watch = new TransformStream<Uint8Array, Uint8Array>({
          transform: (chunk, out) => {
            if (this.#stopOn && new TextDecoder().decode(chunk).includes(this.#stopOn)) {
              this.#stopOn = undefined;
              this.stop();
            } else out.enqueue(chunk);
          },
        });
        client.readable.pipeThrough(watch).pipeTo(upstream.writable).catch(() => {});
        upstream.readable.pipeTo(client.writable).catch(() => {});
      }
    })().catch(() => {});
  }

  /** Stops (as stop() does) when a client next sends `text`, instead of passing it on. */
  stopOn(text: string): void {
    this.#stopOn = text;
  }
  #stopOn: string | undefined;

  /** Refuses new connections and cuts the open ones (the server gone). */
  stop(): void {
    this.#listener?.close();
    this.#listener = undefined;
    for (const conn of this.#open) {
      try {
        conn.close();
      } catch { /* closed already */ }
    }
    this.#open.clear();
  }
}

/** A test that needs the PostgreSQL server (DATABASE_URL), skipped without it. */
function serverTest(name: string, fn: () => Promise<void>): void {
  const url = Deno.env.get("DATABASE_URL");
  Deno.test({
    name: url ? name : `${name} (skipped: set DATABASE_URL to a PostgreSQL server)`,
    ignore: !url,
    sanitizeOps: false,
    sanitizeResources: false,
    fn,
  });
}

/** `work`, or a rejection after `ms` (a hang fails the test rather than the suite). */
function within<T>(work: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    work,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)),
  ]);
}

serverTest("a pool whose server was away answers again once it is back", async () => {
  const relay = new Relay(plainTcpAddress(Deno.env.get("DATABASE_URL")!)!);
  const db = await connectDatabase({ ...testConfig(), DATABASE_URL: relay.url() }, { max: 3 });
  try {
    // More failures than connections in the pool: each one's connection failed to connect.
    for (let i = 0; i < 6; i++) await assert.rejects(db.sql`select 1`);
    relay.start();
    // postgres.js retries with back-off (up to 20 s); before the fix every connection stayed "connecting" for good.
    const [row] = await within(db.sql`select 42::int as n`, 40_000);
    assert.equal(row.n, 42);
  } finally {
    await db.close().catch(() => {});
    relay.stop();
  }
});

serverTest("a transaction open when the server goes away fails, and the pool goes on once it is back", async () => {
  const relay = new Relay(plainTcpAddress(Deno.env.get("DATABASE_URL")!)!);
  relay.start();
  const db = await connectDatabase({ ...testConfig(), DATABASE_URL: relay.url() }, { max: 2 });
  try {
    // postgres.js 3.4.9 runs the ROLLBACK on the closed connection and throws from a setImmediate,
    // which ends the process (porsager/postgres#1208): the patched copy rejects it.
    const cut = db.sql.begin(async (tx) => {
      await tx`select 1`;
      relay.stop();
      await tx`select pg_sleep(0.2)`;
    });
    await assert.rejects(within(cut, 20_000), (err: Error) => !/no answer within/.test(err.message));
    relay.start();
    const [row] = await within(db.sql.begin((tx) => tx`select 7::int as n`), 40_000);
    assert.equal(row.n, 7);
  } finally {
    await db.close().catch(() => {});
    relay.stop();
  }
});

serverTest(
  "a connection cut while it fetches the array types, the server staying away, fails its query and no other",
  async () => {
    const relay = new Relay(plainTcpAddress(Deno.env.get("DATABASE_URL")!)!);
    relay.start();
    // postgres.js fetched the types on a promise nothing awaited; when the next socket could not connect,
    // that promise rejected unhandled, which ends a process.
    const unhandled: unknown[] = [];
    const onUnhandled = (e: PromiseRejectionEvent) => {
      unhandled.push(e.reason);
      e.preventDefault();
    };
    globalThis.addEventListener("unhandledrejection", onUnhandled);
    const db = await connectDatabase({ ...testConfig(), DATABASE_URL: relay.url() }, { max: 1 });
    try {
      // Each new connection fetches the array types first; the server goes away when it is asked for them.
      relay.stopOn("typarray");
      await assert.rejects(within(db.sql`select 1`, 20_000), (err: Error) => !/no answer within/.test(err.message));
      relay.start();
      const [row] = await within(db.sql`select 42::int as n`, 40_000);
      assert.equal(row.n, 42);
      assert.deepEqual(unhandled.map(String), []);
    } finally {
      globalThis.removeEventListener("unhandledrejection", onUnhandled);
      await db.close().catch(() => {});
      relay.stop();
    }
  },
);

serverTest("a reserved connection that closed is left out of the pool when released", async () => {
  const relay = new Relay(plainTcpAddress(Deno.env.get("DATABASE_URL")!)!);
  relay.start();
  const db = await connectDatabase({ ...testConfig(), DATABASE_URL: relay.url() }, { max: 1 });
  try {
    const reserved = await db.sql.reserve();
    await reserved`select 1`;
    relay.stop();
    await assert.rejects(within(reserved`select 2`, 20_000), (err: Error) => !/no answer within/.test(err.message));
    // postgres.js 3.4.9 put the closed connection back among the open ones, where every query failed.
    reserved.release();
    relay.start();
    const [row] = await within(db.sql`select 5::int as n`, 40_000);
    assert.equal(row.n, 5);
  } finally {
    await db.close().catch(() => {});
    relay.stop();
  }
});

serverTest(
  "a transaction whose connection closed writes nothing after, on that connection once reconnected",
  async () => {
    const relay = new Relay(plainTcpAddress(Deno.env.get("DATABASE_URL")!)!);
    relay.start();
    const db = await connectDatabase({ ...testConfig(), DATABASE_URL: relay.url() }, { max: 1 });
    const table = `db_test_${crypto.randomUUID().replaceAll("-", "")}`;
    try {
      await db.sql`create table ${db.sql(table)} (n int)`;
      let resume = () => {};
      const resumed = new Promise<void>((r) => resume = r);
      let bodyDone = () => {};
      const body = new Promise<void>((r) => bodyDone = r);
      const cut = db.sql.begin(async (tx) => {
        try {
          await tx`select 1`;
          relay.stop();
          await resumed;
          await tx`insert into ${tx(table)} values (1)`;
        } finally {
          bodyDone();
        }
      });
      await assert.rejects(within(cut, 20_000), (err: Error) => !/no answer within/.test(err.message));
      // The pool reconnects the connection for another query while the transaction's body still runs.
      relay.start();
      await within(db.sql`select 1`, 40_000);
      resume();
      await within(body, 20_000);
      // postgres.js 3.4.9 ran the body's insert on the reconnected connection, outside any transaction.
      const [row] = await within(db.sql`select count(*)::int as n from ${db.sql(table)}`, 20_000);
      assert.equal(row.n, 0);
    } finally {
      await db.sql`drop table if exists ${db.sql(table)}`.catch(() => {});
      await db.close().catch(() => {});
      relay.stop();
    }
  },
);

serverTest("a connection the server terminated answers the next query once reconnected", async () => {
  const db = await connectDatabase(testConfig(), { max: 1 });
  const admin = await connectDatabase(testConfig(), { max: 1 });
  try {
    const [{ pid }] = await db.sql`select pg_backend_pid() as pid`;
    const sleeping = db.sql`select pg_sleep(10)`.execute();
    // What a server shutting down does to its connections: a FATAL error (57P01), then the close.
    await admin.sql`select pg_terminate_backend(${pid})`;
    await assert.rejects(within(sleeping, 20_000), (err: Error) => !/no answer within/.test(err.message));
    // postgres.js 3.4.9 kept that error and failed the reconnected connection's first query with it.
    const [row] = await within(db.sql`select 3::int as n`, 20_000);
    assert.equal(row.n, 3);
  } finally {
    await db.close().catch(() => {});
    await admin.close();
  }
});
