import assert from "node:assert/strict";
import { connectDatabase } from "./db.ts";
import { testConfig } from "./testing.ts";

Deno.test("the embedded database runs transactions begun among hundreds of pipelined queries", async () => {
  const db = await connectDatabase(testConfig({ DATABASE_URL: undefined, PGLITE_DIR: "memory://" }));
  try {
    // postgres.js 3.4.9 loses the connection of a BEGIN that fills the pipeline (100 queries) or meets a
    // full socket (porsager/postgres#1189): the transaction's queries then throw a TypeError nothing can
    // catch, and the one connection to PGlite stays inside that transaction.
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
