/** The bench's result rows and their markdown table. */

/** CPU µs per request: server process, database backends (real server only), load generator (the bench's process). */
export interface CpuPerRequest {
  server: number;
  db?: number;
  client: number;
  /** Share of the run's wall time the server's main thread (JavaScript and HTTP) was on a CPU, 0 to 1. */
  serverMainBusy?: number;
}

/** One line of the result table. */
export interface Row {
  scenario: string;
  kind: "baseline" | "http" | "rate";
  /** Concurrent connections (HTTP rows). */
  connections?: number;
  /** Things per second. */
  rate?: number;
  /** What `rate` counts: "req/s", "deliveries/s" … */
  unit: string;
  count?: number;
  seconds?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** Non-2xx answers plus connection errors and timeouts. */
  errors: number;
  /** Answers by status code. */
  statuses?: Record<string, number>;
  /** The baseline this row is compared with, and its rate at the same connection count. */
  baseline?: string;
  baselineRate?: number;
  cpuUsPerRequest?: CpuPerRequest;
  /** Baseline's CPU per request over this row's, all processes counted (see measure.ts `compare`). */
  cpuRatio?: number;
  /** rate / baselineRate. */
  ratio?: number;
  /** Why the row was not measured. */
  skipped?: string;
  /** What else the run found (a send's backlog drain, a fan-out's peak RSS …). */
  note?: string;
}

const fmtInt = (n: number) => Math.round(n).toLocaleString("en-US");
const fmtMs = (n?: number) => (n === undefined || Number.isNaN(n) ? "—" : n < 10 ? n.toFixed(2) : n.toFixed(1));

/** Renders rows as a markdown table. */
export function renderTable(rows: Row[]): string {
  const header = [
    "scenario",
    "connections",
    "req/s",
    "p50 ms",
    "p99 ms",
    "errors",
    "vs baseline",
    "CPU µs/req (main thread busy)",
    "CPU ratio",
    "notes",
  ];
  const lines = rows.map((r) => {
    if (r.skipped) {
      return [
        r.scenario,
        String(r.connections ?? "—"),
        "SKIPPED",
        "—",
        "—",
        "—",
        r.skipped.length > 90 ? `${r.skipped.slice(0, 90)}…` : r.skipped,
        "—",
        "—",
        "",
      ];
    }
    const rate = r.rate === undefined ? "—" : r.unit === "req/s" ? fmtInt(r.rate) : `${fmtInt(r.rate)} ${r.unit}`;
    const ratio = r.ratio === undefined
      ? "—"
      : `${(r.ratio * 100).toFixed(0)} % of ${r.baseline} (${fmtInt(r.baselineRate ?? 0)})`;
    const errors = r.errors > 0 ? `**${r.errors}** ${JSON.stringify(r.statuses ?? {})}` : "0";
    const cpu = r.cpuUsPerRequest;
    const cpuText = !cpu
      ? "—"
      : (cpu.db === undefined || cpu.db < 0.5 ? fmtInt(cpu.server) : `${fmtInt(cpu.server)} + ${fmtInt(cpu.db)} db`) +
        (cpu.serverMainBusy === undefined ? "" : ` (main ${(cpu.serverMainBusy * 100).toFixed(0)} %)`);
    const cpuRatio = r.cpuRatio === undefined ? "—" : `${(r.cpuRatio * 100).toFixed(0)} %`;
    return [
      r.scenario,
      String(r.connections ?? "—"),
      rate,
      fmtMs(r.p50Ms),
      fmtMs(r.p99Ms),
      errors,
      ratio,
      cpuText,
      cpuRatio,
      r.note ?? "",
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const row = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [row(header), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(row)].join("\n");
}
