import assert from "node:assert/strict";
import type { Db } from "./db.ts";
import { type BulkColumn, bulkRows } from "./bulk.ts";
import { dbTest, testRuntime } from "./testing.ts";

/** Inserts the columns into a fresh temporary table and reads the rows back in insertion order. */
async function roundTrip(columns: Record<string, BulkColumn>): Promise<Record<string, unknown>[]> {
  const { deps } = await testRuntime();
  return await deps.sql.begin(async (tx: Db) => {
    await tx`create temporary table bulk_rows (
      n serial, id text, team_id uuid, batch_no int, cost bigint, sent_at timestamptz(3), note text, flag boolean
    ) on commit drop`;
    await tx`insert into bulk_rows ${bulkRows(tx, columns)}`;
    return await tx`select id, team_id, batch_no, cost, sent_at, note, flag from bulk_rows order by n`;
  });
}

const TEAM = "0190f0a8-0000-7000-8000-000000000001";
const OTHER = "0190f0a8-0000-7000-8000-000000000002";

dbTest("bulkRows() inserts every row, with uniform columns sent once and varying ones as arrays", async () => {
  const rows = await roundTrip({
    id: { type: "text", values: ["a", "b", 'c"\\,{}'] },
    team_id: { type: "uuid", values: [TEAM, TEAM, TEAM] },
    batch_no: { type: "int", values: [7, 7, 7] },
    cost: { type: "bigint", values: [1, 2, 9_007_199_254_740_991] },
    sent_at: { type: "timestamptz", values: ["2026-11-22T10:00:00.000Z", null, "2026-11-22T10:00:00.123Z"] },
    note: { type: "text", values: [null, "m", null] },
  });
  assert.deepEqual(rows.map((r) => ({ ...r, sent_at: (r.sent_at as Date | null)?.toISOString() ?? null })), [
    { id: "a", team_id: TEAM, batch_no: 7, cost: 1, sent_at: "2026-11-22T10:00:00.000Z", note: null, flag: null },
    { id: "b", team_id: TEAM, batch_no: 7, cost: 2, sent_at: null, note: "m", flag: null },
    {
      id: 'c"\\,{}',
      team_id: TEAM,
      batch_no: 7,
      cost: 9_007_199_254_740_991,
      sent_at: "2026-11-22T10:00:00.123Z",
      note: null,
      flag: null,
    },
  ]);
});

dbTest("bulkRows() inserts as many rows as it is given when every column is the same in each", async () => {
  const rows = await roundTrip({
    id: { type: "text", values: ["x", "x", "x", "x"] },
    team_id: { type: "uuid", values: [OTHER, OTHER, OTHER, OTHER] },
  });
  assert.deepEqual(rows.map((r) => [r.id, r.team_id, r.batch_no]), [
    ["x", OTHER, null],
    ["x", OTHER, null],
    ["x", OTHER, null],
    ["x", OTHER, null],
  ]);
  const one = await roundTrip({ id: { type: "text", values: ["only"] }, note: { type: "text", values: ["n"] } });
  assert.deepEqual(one.map((r) => [r.id, r.note]), [["only", "n"]]);
});

dbTest("bulkRows() puts a column given one value in every row (one row when no column has a list)", async () => {
  const rows = await roundTrip({
    id: { type: "text", values: ["a", "b"] },
    team_id: { type: "uuid", value: TEAM },
    batch_no: { type: "int", value: 3 },
    note: { type: "text", value: null },
  });
  assert.deepEqual(rows.map((r) => [r.id, r.team_id, r.batch_no, r.note]), [
    ["a", TEAM, 3, null],
    ["b", TEAM, 3, null],
  ]);
  const single = await roundTrip({ id: { type: "text", value: "s" }, cost: { type: "bigint", value: 5 } });
  assert.deepEqual(single.map((r) => [r.id, r.cost]), [["s", 5]]);
});

dbTest("bulkRows() takes boolean columns, varying (nulls included) or the same in every row", async () => {
  const varying = await roundTrip({
    id: { type: "text", values: ["a", "b", "c"] },
    flag: { type: "boolean", values: [true, false, null] },
  });
  assert.deepEqual(varying.map((r) => [r.id, r.flag]), [["a", true], ["b", false], ["c", null]]);
  const same = await roundTrip({
    id: { type: "text", values: ["a", "b"] },
    flag: { type: "boolean", values: [true, true] },
  });
  assert.deepEqual(same.map((r) => [r.id, r.flag]), [["a", true], ["b", true]]);
});

dbTest("bulkRows() refuses columns of different lengths", async () => {
  await assert.rejects(
    roundTrip({ id: { type: "text", values: ["a", "b"] }, note: { type: "text", values: ["n"] } }),
    /column note has the wrong length/,
  );
});
