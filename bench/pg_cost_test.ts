import assert from "node:assert/strict";
import { describePgCost, parseLsn, pgCost } from "./pg_cost.ts";

Deno.test("parseLsn reads both halves of an LSN as one byte position", () => {
  assert.equal(parseLsn("0/10"), 16n);
  assert.equal(parseLsn("16/B374D848"), (0x16n << 32n) + 0xB374D848n);
  assert.throws(() => parseLsn("16"), /not an LSN/);
});

Deno.test("pgCost counts each backend's CPU since the first snapshot, a new backend's whole", () => {
  const cost = pgCost(
    { cpu: new Map([[1, 2], [2, 5]]), autovacuum: new Map([[9, 1]]), wal: parseLsn("0/1000") },
    { cpu: new Map([[1, 3.5], [3, 0.25]]), autovacuum: new Map([[9, 1.5]]), wal: parseLsn("1/0") },
  );
  assert.deepEqual(cost, { cpuSeconds: 1.75, autovacuumSeconds: 0.5, walBytes: 2 ** 32 - 0x1000 });
});

Deno.test("describePgCost divides by every non-zero count", () => {
  assert.equal(
    describePgCost({ cpuSeconds: 0.5, autovacuumSeconds: 0, walBytes: 12_000_000 }, {
      "accepted send": 10_000,
      delivery: 0,
    }),
    "Postgres 50 µs CPU + 1,200 B WAL per accepted send",
  );
  assert.equal(
    describePgCost({ cpuSeconds: 0.5, autovacuumSeconds: 0.1, walBytes: 0 }, { delivery: 10_000 }),
    "Postgres 50 µs CPU (+ 10 µs autovacuum) + 0 B WAL per delivery",
  );
});
