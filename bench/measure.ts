/** Measuring: one run against one server, and the runs of a baseline or a scenario. */
import { BASELINE_LABELS, type BaselineMode, baselineRequests, DIAGNOSTIC_OF } from "./baselines.ts";
import { type LoadResult, prepareLoad, type Requests, type RequestSpec, runLoad, sendOnce } from "./load.ts";
import type { Options } from "./options.ts";
import { type Inspector, summarise } from "./profile.ts";
import type { BenchContext, HttpScenario, RateResult, RateScenario } from "./context.ts";
import { cpuSeconds, mainThreadCpuSeconds } from "./server.ts";
import type { CpuPerRequest, Row } from "./table.ts";

const benchStart = performance.now();
/** A progress line on stderr, stamped with the seconds since the bench started. */
export const progress = (text: string) =>
  console.error(`[${((performance.now() - benchStart) / 1000).toFixed(1)}s] ${text}`);
/** A line that must not be missed (errors, skipped scenarios). */
export const loud = (text: string) => console.error(`\n!!! ${text}\n`);

/** A table row from one measured run (errors are printed loudly). */
function rowFromLoad(scenario: string, kind: Row["kind"], connections: number, m: Measured): Row {
  const r = m.result;
  const errors = r.non2xx + r.errors;
  if (errors > 0) {
    loud(
      `${scenario} @${connections}: ${r.non2xx} non-2xx answers and ${r.errors} errors ${JSON.stringify(r.statuses)}`,
    );
  }
  return {
    scenario,
    kind,
    connections,
    rate: r.rps,
    unit: "req/s",
    count: r.requests,
    seconds: r.seconds,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    errors,
    statuses: r.statuses,
    cpuUsPerRequest: m.cpuUs,
  };
}

/**
 * A factory is wrapped so that its numbers run on across the warm-up and every measurement (bodies
 * stay unique); `next()` gives a request of the same kind for probes and error samples.
 */
function sequenced(requests: Requests): { requests: Requests; next: () => RequestSpec } {
  if (typeof requests !== "function") return { requests, next: () => requests[0] };
  let seq = 0;
  return { requests: () => requests(seq++), next: () => requests(seq++) };
}

/** Where a measurement sends its load, and whose CPU time it reads. */
export interface Target {
  url: string;
  pid: number;
  /** The backend pids serving the bench database, when its server runs on this machine. */
  dbPids?: () => Promise<number[]>;
  /** Name in progress lines and profile files. */
  name: string;
  /** Set with `--profile`: the server's inspector, to profile each measured run. */
  inspector?: Inspector;
  /** Where profiles go. */
  outDir: string;
}

/** One measured run, with the CPU time the server, the database and the load generator spent per request. */
interface Measured {
  result: LoadResult;
  cpuUs: CpuPerRequest;
}

/** All the CPU one request took on this machine. */
export function totalCpu(cpu: CpuPerRequest): number {
  return cpu.server + (cpu.db ?? 0) + cpu.client;
}

/** Warms up, then measures one run, reading CPU times around it (and profiling it with --profile). */
export async function measure(
  target: Target,
  connections: number,
  options: Options,
  requests: Requests,
): Promise<Measured> {
  const { url } = target;
  const generator = options.load;
  // Both runs are written out first, so that nothing pauses the load between them.
  const measured = await prepareLoad({ generator, url, connections, durationSec: options.durationSec, requests });
  await runLoad({ generator, url, connections, durationSec: options.warmupSec, requests });
  const pids = (await target.dbPids?.()) ?? [];
  const dbSeconds = async () => (await Promise.all(pids.map((pid) => cpuSeconds(pid)))).reduce((a, b) => a + b, 0);
  // The load generator's CPU: this process's, and (wrk) its children's once they have ended.
  const before = [
    await cpuSeconds(target.pid),
    await dbSeconds(),
    await cpuSeconds(Deno.pid, true),
    await mainThreadCpuSeconds(target.pid),
  ];
  let result: LoadResult | undefined;
  const work = async () => {
    result = await measured();
  };
  const profile = target.inspector ? await target.inspector.profile(work) : (await work(), undefined);
  const after = [
    await cpuSeconds(target.pid),
    await dbSeconds(),
    await cpuSeconds(Deno.pid, true),
    await mainThreadCpuSeconds(target.pid),
  ];
  const perRequest = (i: number) => ((after[i] - before[i]) * 1e6) / Math.max(1, result!.requests);
  if (profile) {
    const file = `${target.outDir}/profile-${target.name.replace(/\W+/g, "_")}-${connections}.cpuprofile`;
    await Deno.writeTextFile(file, JSON.stringify(profile));
    console.error(
      `\n--- CPU profile: ${target.name} @${connections} (${file})\n${summarise(profile, result!.requests)}\n`,
    );
  }
  const cpuUs: CpuPerRequest = {
    server: perRequest(0),
    db: target.dbPids ? perRequest(1) : undefined,
    client: perRequest(2),
    serverMainBusy: after[3] > 0 && result!.seconds > 0 ? (after[3] - before[3]) / result!.seconds : undefined,
  };
  return { result: result!, cpuUs };
}

/** Prints one status answer of a scenario that had errors, so the cause is visible. */
async function sampleError(url: string, spec: RequestSpec): Promise<void> {
  try {
    const res = await sendOnce(url, spec);
    if (res.status < 200 || res.status > 299) loud(`sample answer: ${res.status} ${res.body.slice(0, 500)}`);
  } catch (err) {
    loud(`sample request failed: ${err}`);
  }
}

/**
 * Sets the row's ratios to a baseline: of throughput, and of CPU per request (baseline's over the
 * row's, all processes counted): the throughput ratio a dedicated machine would show when CPU-bound,
 * which holds up when other work shares the machine and throughput figures swing.
 */
function compare(row: Row, mode: BaselineMode, baseline: { rate: number; cpu?: CpuPerRequest }): void {
  row.baseline = mode;
  row.baselineRate = baseline.rate;
  row.ratio = row.rate! / baseline.rate;
  if (baseline.cpu && row.cpuUsPerRequest) row.cpuRatio = totalCpu(baseline.cpu) / totalCpu(row.cpuUsPerRequest);
}

/** A baseline server ready to be measured again (for rounds that alternate it with a scenario). */
export interface BaselineRunner {
  mode: BaselineMode;
  measure(connections: number): Promise<Measured>;
}

/** Wraps a baseline server's target and its request sequence. */
export function baselineRunner(mode: BaselineMode, target: Target, options: Options, runId: string): BaselineRunner {
  const { requests } = sequenced(baselineRequests(mode, runId));
  return { mode, measure: (connections) => measure(target, connections, options, requests) };
}

/** Measures a baseline (or diagnostic) server at every connection count; records its rates. */
export async function runBaseline(
  runner: BaselineRunner,
  options: Options,
  rates: Map<string, Row>,
): Promise<Row[]> {
  const mode = runner.mode;
  const rows: Row[] = [];
  for (const connections of options.connections) {
    const row = rowFromLoad(BASELINE_LABELS[mode], "baseline", connections, await runner.measure(connections));
    rates.set(`${mode}@${connections}`, row);
    const against = mode in DIAGNOSTIC_OF ? DIAGNOSTIC_OF[mode as keyof typeof DIAGNOSTIC_OF] : undefined;
    const baselineRow = against && rates.get(`${against}@${connections}`);
    if (against && baselineRow) compare(row, against, { rate: baselineRow.rate!, cpu: baselineRow.cpuUsPerRequest });
    rows.push(row);
    progress(`${row.scenario} @${connections}: ${Math.round(row.rate!)} req/s`);
  }
  return rows;
}

/** Several runs as one: counts and times add up, CPU per request is weighted, percentiles are the median run's. */
function merge(runs: Measured[]): Measured {
  if (runs.length === 1) return runs[0];
  const sum = (f: (m: Measured) => number) => runs.reduce((a, m) => a + f(m), 0);
  const median = (f: (m: Measured) => number) => runs.map(f).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const requests = sum((m) => m.result.requests);
  const seconds = sum((m) => m.result.seconds);
  const statuses: Record<string, number> = {};
  for (const m of runs) for (const [k, v] of Object.entries(m.result.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
  const weighted = (f: (m: Measured) => number | undefined) =>
    runs.some((m) => f(m) === undefined) ? undefined : sum((m) => f(m)! * m.result.requests) / Math.max(1, requests);
  return {
    result: {
      requests,
      seconds,
      rps: requests / seconds,
      p50Ms: median((m) => m.result.p50Ms),
      p99Ms: median((m) => m.result.p99Ms),
      non2xx: sum((m) => m.result.non2xx),
      errors: sum((m) => m.result.errors),
      statuses,
    },
    cpuUs: {
      server: weighted((m) => m.cpuUs.server)!,
      db: weighted((m) => m.cpuUs.db),
      client: weighted((m) => m.cpuUs.client)!,
      serverMainBusy: runs.some((m) => m.cpuUs.serverMainBusy === undefined)
        ? undefined
        : sum((m) => m.cpuUs.serverMainBusy! * m.result.seconds) / seconds,
    },
  };
}

/** Sets up, probes and measures an HTTP scenario at every connection count, against its baseline. */
export async function runHttpScenario(
  scenario: HttpScenario,
  ctx: BenchContext,
  target: Target,
  options: Options,
  rates: Map<string, Row>,
  baseline?: BaselineRunner,
  /** Nothing is measured after this scenario: a --quick run does not wait for its backlog. */
  final = false,
): Promise<Row[]> {
  const skip = (reason: string) => {
    loud(`${scenario.name}: SKIPPED: ${reason}`);
    return [{ scenario: scenario.name, kind: "http" as const, unit: "req/s", errors: 0, skipped: reason }];
  };
  try {
    if (scenario.setup) {
      await scenario.setup(ctx);
      progress(`${scenario.name}: setup done`);
    }
  } catch (err) {
    return skip(`setup failed: ${err instanceof Error ? err.message : err}`);
  }
  const { requests, next } = sequenced(scenario.requests(ctx));
  const probe = await sendOnce(ctx.url, next());
  if (probe.status < 200 || probe.status > 299) {
    return skip(`probe answered ${probe.status} ${probe.body.slice(0, 200)}`);
  }
  const rows: Row[] = [];
  for (const connections of options.connections) {
    const service = { ...target, name: `service ${scenario.name}` };
    // With --rounds=N the baseline and the scenario alternate N times, so that both meet the same
    // machine (other work on it comes and goes); the ratio is then that of the paired runs.
    const runs: Measured[] = [];
    const paired: Measured[] = [];
    const notes: string[] = [];
    for (let round = 0; round < options.rounds; round++) {
      if (options.rounds > 1 && baseline) paired.push(await baseline.measure(connections));
      runs.push(await measure(service, connections, options, requests));
      const lastRun = final && round === options.rounds - 1 && connections === options.connections.at(-1);
      const note = options.quick && lastRun && scenario.settle
        ? "backlog not awaited (last scenario of --quick)"
        : await scenario.settle?.(ctx);
      if (note) notes.push(note);
    }
    const row = rowFromLoad(scenario.name, "http", connections, merge(runs));
    if (notes.length > 0) row.note = notes.length === 1 ? notes[0] : `${notes.at(-1)} (last of ${notes.length} rounds)`;
    if (row.errors > 0) await sampleError(ctx.url, next());
    const pairedRun = paired.length > 0 ? merge(paired) : undefined;
    const baselineRow = rates.get(`${scenario.baseline}@${connections}`);
    if (pairedRun) compare(row, scenario.baseline, { rate: pairedRun.result.rps, cpu: pairedRun.cpuUs });
    else if (baselineRow) {
      compare(row, scenario.baseline, { rate: baselineRow.rate!, cpu: baselineRow.cpuUsPerRequest });
    }
    rows.push(row);
    progress(`${row.scenario} @${connections}: ${Math.round(row.rate!)} req/s`);
  }
  return rows;
}

/** Runs a rate scenario once (CPU-profiling the service during the run with --profile). */
export async function runRateScenario(scenario: RateScenario, ctx: BenchContext, target?: Target): Promise<Row[]> {
  if (scenario.enabled && !scenario.enabled(ctx)) return [];
  try {
    if (scenario.setup) {
      await scenario.setup(ctx);
      progress(`${scenario.name}: setup done`);
    }
    let result: RateResult | RateResult[] | undefined;
    const work = async () => {
      result = await scenario.run(ctx);
    };
    const profile = target?.inspector ? await target.inspector.profile(work) : (await work(), undefined);
    const results = Array.isArray(result) ? result : [result!];
    if (profile && target) {
      const file = `${target.outDir}/profile-service_${scenario.name.replace(/\W+/g, "_")}.cpuprofile`;
      await Deno.writeTextFile(file, JSON.stringify(profile));
      const count = results.reduce((n, r) => n + r.count, 0);
      console.error(
        `\n--- CPU profile: service ${scenario.name} (${file}; µs/req: µs per one of the ${scenario.unit})\n${
          summarise(profile, count)
        }\n`,
      );
    }
    return results.map((r) => rateRow(scenario, r));
  } catch (err) {
    const reason = `failed: ${err instanceof Error ? err.message : err}`;
    loud(`${scenario.name}: ${reason}`);
    return [{ scenario: scenario.name, kind: "rate", unit: `${scenario.unit}/s`, errors: 0, skipped: reason }];
  }
}

/** The table row of one rate result: compared with the rate it names, else with the scenario's target. */
function rateRow(scenario: RateScenario, r: RateResult): Row {
  const name = r.name ?? scenario.name;
  const errors = r.errors ?? 0;
  if (errors > 0) loud(`${name}: ${errors} errors`);
  const rate = r.count / r.seconds;
  progress(`${name}: ${Math.round(rate)} ${scenario.unit}/s`);
  const against = r.compareTo ??
    (scenario.target ? { label: "target", rate: scenario.target } : undefined);
  return {
    scenario: name,
    kind: "rate",
    rate,
    unit: `${scenario.unit}/s`,
    count: r.count,
    seconds: r.seconds,
    p50Ms: r.p50Ms,
    p99Ms: r.p99Ms,
    errors,
    ...(against ? { baseline: against.label, baselineRate: against.rate, ratio: rate / against.rate } : {}),
    note: r.note,
  };
}
