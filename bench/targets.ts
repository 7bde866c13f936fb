/** The throughput targets the issues set, checked against a run's rows. */
import type { Row } from "./table.ts";

/** One target: which rows it reads and what they must show. */
interface Target {
  /** Issue number and wording. */
  label: string;
  /** Rows whose scenario name starts with this. */
  scenario: string;
  /** Only rows at this connection count (the issue's). */
  connections?: number;
  check: (row: Row) => { met: boolean; figure: string };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const int = (x: number) => Math.round(x).toLocaleString("en-US");

/** A fan-out row's peak RSS (from its note) against a limit. */
function peakRss(r: Row, within: (mib: number) => boolean): { met: boolean; figure: string } {
  const mib = Number(/peak RSS (\d+) MiB/.exec(r.note ?? "")?.[1] ?? NaN);
  return { met: within(mib), figure: Number.isNaN(mib) ? "unknown" : `${mib} MiB` };
}

/** Issue targets (issue 3: sends and fan-out; issue 4: OTP verify; issue 7: workflows; issue 29: sustained load). */
export const TARGETS: Target[] = [
  {
    label: "issue 3: SMS send ≥ 3× kv.enqueue",
    scenario: "SMS send",
    check: (r) => ({ met: (r.ratio ?? 0) >= 3, figure: `${(r.ratio ?? 0).toFixed(2)}×` }),
  },
  {
    label: "issue 3: fan-out ≥ 20,000 deliveries/s",
    scenario: "fan-out: email to a tag",
    check: (r) => ({ met: (r.rate ?? 0) >= 20_000, figure: `${int(r.rate ?? 0)}/s` }),
  },
  {
    label: "issue 3: fan-out peak RSS < 300 MB",
    scenario: "fan-out: email to a tag",
    check: (r) => peakRss(r, (mib) => mib * 1.048576 < 300),
  },
  {
    label: "issue 29: fan-out peak RSS < 300 MiB (both engines)",
    scenario: "fan-out: email to a tag",
    check: (r) => peakRss(r, (mib) => mib < 300),
  },
  {
    label: "issue 29: fan-out ≥ 25,000 deliveries/s (ENGINE=kv; 0.8× that on postgres)",
    scenario: "fan-out: email to a tag",
    check: (r) => ({ met: (r.rate ?? 0) >= 25_000, figure: `${int(r.rate ?? 0)}/s` }),
  },
  {
    label: "issue 29: the large fan-out within 10 % of the usual one's rate",
    scenario: "fan-out: email to a tag of",
    check: (r) => ({
      met: r.baseline !== "target" && (r.ratio ?? 0) >= 0.9,
      figure: r.baseline === "target" ? "no smaller fan-out in this run" : pct(r.ratio ?? 0),
    }),
  },
  {
    label: "issue 29: ≥ 12,000 direct SMS/s sustained, p99 due-to-Twilio < 1 s (ENGINE=kv; 0.8× on postgres)",
    scenario: "sustained: direct SMS, highest",
    check: (r) => ({
      met: (r.rate ?? 0) >= 12_000 && (r.p99Ms ?? Infinity) < 1000,
      figure: `${int(r.rate ?? 0)}/s, p99 ${(r.p99Ms ?? NaN).toFixed(0)} ms`,
    }),
  },
  {
    label: "issue 4: OTP verify ≥ 80 % of kv.set @50",
    scenario: "OTP verify",
    connections: 50,
    check: (r) => ({ met: (r.ratio ?? 0) >= 0.8, figure: pct(r.ratio ?? 0) }),
  },
  {
    label: "issue 4: OTP verify p99 < 25 ms @50",
    scenario: "OTP verify",
    connections: 50,
    check: (r) => ({ met: (r.p99Ms ?? Infinity) < 25, figure: `${(r.p99Ms ?? NaN).toFixed(1)} ms` }),
  },
  {
    label: "issue 7: workflow executions ≥ 2,000/s",
    scenario: "workflow",
    check: (r) => ({ met: (r.rate ?? 0) >= 2_000, figure: `${int(r.rate ?? 0)}/s` }),
  },
];

/** A target checked on one row. */
export interface Verdict {
  target: string;
  row: string;
  met: boolean;
  figure: string;
}

/** Checks every target on every measured row it reads. */
export function checkTargets(rows: Row[]): Verdict[] {
  const verdicts: Verdict[] = [];
  for (const t of TARGETS) {
    for (const r of rows) {
      if (r.skipped || r.kind === "baseline" || !r.scenario.startsWith(t.scenario)) continue;
      if (t.connections !== undefined && r.connections !== t.connections) continue;
      const { met, figure } = t.check(r);
      const at = r.connections === undefined ? "" : ` @${r.connections}`;
      verdicts.push({ target: t.label, row: `${r.scenario}${at}`, met, figure });
    }
  }
  return verdicts;
}

/** The verdicts as markdown list lines. */
export function renderVerdicts(verdicts: Verdict[]): string {
  return verdicts.map((v) => `- ${v.met ? "met" : "**missed**"}: ${v.target} — ${v.row}: ${v.figure}`).join("\n");
}
