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

Deno.test({
  name: Deno.env.get("DATABASE_URL")
    ? "a pool whose server was away answers again once it is back"
    : "a pool whose server was away answers again once it is back (skipped: set DATABASE_URL to a PostgreSQL server)",
  ignore: !Deno.env.get("DATABASE_URL"),
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = plainTcpAddress(Deno.env.get("DATABASE_URL")!)!;
    // The server is reached through a port where nothing listens at first (refused), then a relay to it.
    const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (probe.addr as Deno.NetAddr).port;
    probe.close();
    const url = new URL(Deno.env.get("DATABASE_URL")!);
    url.hostname = "127.0.0.1";
    url.port = String(port);
    const db = await connectDatabase({ ...testConfig(), DATABASE_URL: url.toString() }, { max: 3 });
    let relay: Deno.Listener | undefined;
    try {
      // More failures than connections in the pool: each one's connection failed to connect.
      for (let i = 0; i < 6; i++) await assert.rejects(db.sql`select 1`);
      relay = Deno.listen({ hostname: "127.0.0.1", port });
      (async () => {
        for await (const client of relay!) {
          const upstream = await Deno.connect({ hostname: server.host, port: server.port });
          client.readable.pipeTo(upstream.writable).catch(() => {});
          upstream.readable.pipeTo(client.writable).catch(() => {});
        }
      })().catch(() => {});
      // postgres.js retries with back-off (up to 20 s); before the fix every connection stayed "connecting" for good.
      const [row] = await Promise.race([
        db.sql`select 42::int as n`,
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error("no answer within 40 s")), 40_000)),
      ]);
      assert.equal(row.n, 42);
    } finally {
      await db.close().catch(() => {});
      relay?.close();
    }
  },
});
