import assert from "node:assert/strict";
import { renderTable } from "./table.ts";

Deno.test("renderTable shows rates, latencies, errors and the ratio to the baseline", () => {
  const table = renderTable([
    {
      scenario: "baseline: SELECT",
      kind: "baseline",
      connections: 50,
      rate: 10000,
      unit: "req/s",
      p50Ms: 4.5,
      p99Ms: 12.25,
      errors: 0,
    },
    {
      scenario: "contact get",
      kind: "http",
      connections: 50,
      rate: 6543.2,
      unit: "req/s",
      p50Ms: 7,
      p99Ms: 30,
      errors: 3,
      statuses: { "200": 10, "500": 3 },
      baseline: "pg-select",
      baselineRate: 10000,
      ratio: 0.65432,
      cpuUsPerRequest: { server: 151.4, db: 80, client: 30, serverMainBusy: 0.914 },
      cpuRatio: 0.5,
    },
    {
      scenario: "fan-out",
      kind: "rate",
      rate: 1500,
      unit: "deliveries/s",
      errors: 0,
      baseline: "target",
      baselineRate: 20000,
      ratio: 0.075,
      note: "peak RSS 300 MiB",
    },
    { scenario: "contact create", kind: "http", unit: "req/s", errors: 0, skipped: "probe answered 404" },
  ]);
  const lines = table.split("\n");
  assert.equal(lines.length, 6);
  assert.match(
    lines[0],
    /\| scenario +\| connections \| req\/s +\| p50 ms \| p99 ms \| errors +\| vs baseline +\| CPU µs\/req \(main thread busy\) +\|/,
  );
  assert.match(lines[2], /\| baseline: SELECT +\| 50 +\| 10,000 +\| 4\.50 +\| 12\.3 +\| 0 /);
  assert.match(
    lines[3],
    /\| 6,543 .*\*\*3\*\* \{"200":10,"500":3\} \| 65 % of pg-select \(10,000\) +\| 151 \+ 80 db \(main 91 %\) +\|/,
  );
  assert.match(
    lines[4],
    /\| fan-out +\| — +\| 1,500 deliveries\/s .*\| 8 % of target \(20,000\) .*\| peak RSS 300 MiB \|$/,
  );
  assert.match(lines[5], /SKIPPED .*probe answered 404/);
  // Every line has the same width: a table a person can read.
  assert.equal(new Set(lines.map((l) => l.length)).size, 1);
});
