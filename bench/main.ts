/**
 * `deno task bench [--quick] [--only=<text>] [--connections=50,200] [--duration=5] [--env=KEY=VALUE …]
 *                  [--profile] [--diagnose] [--entry=<file>] [--worker-process] [--load=wrk|autocannon]
 *                  [--sustained=2000,4000,8000,12000] [--sustained-seconds=60] [--fanout=1000000]`
 *                  (see bench/README.md)
 *
 * Starts the baseline servers (bench/baselines.ts) and then the service (main.ts) on loopback, each in
 * its own process, drives them with wrk (or autocannon where wrk is not installed), prints one markdown table and writes it as JSON to
 * .bench/last.json. With DATABASE_URL set, everything runs in a fresh database created on that server
 * and dropped at the end; without it, each process gets a fresh embedded Postgres (PGlite).
 */
import postgres from "postgres";
import { BASELINE_MODES, type BaselineMode, DIAGNOSTIC_MODES, DIAGNOSTIC_OF, serverOf } from "./baselines.ts";
import { createDatabase, teamViaAdmin, teamViaDatabase } from "./database.ts";
import {
  type BaselineRunner,
  baselineRunner,
  loud,
  progress,
  runBaseline,
  runHttpScenario,
  runRateScenario,
  type Target,
} from "./measure.ts";
import { GENERATOR_LABELS } from "./load.ts";
import { cleanEnv, parseArgs } from "./options.ts";
import { pgProbe } from "./pg_cost.ts";
import { Inspector } from "./profile.ts";
import { type BenchContext, SCENARIOS } from "./scenarios.ts";
import { freePort, type ServerProcess, startServer, startTaskV8Flags, stopAll } from "./server.ts";
import { renderTable, type Row } from "./table.ts";
import { checkTargets, renderVerdicts } from "./targets.ts";
import { startTwilioProbe } from "./twilio_probe.ts";

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function main(): Promise<void> {
  const options = parseArgs(Deno.args);
  const started = performance.now();
  const runId = randomHex(4);
  const root = new URL("../", import.meta.url).pathname;
  const outDir = `${root}.bench`;
  const logDir = `${outDir}/logs`;
  await Deno.mkdir(logDir, { recursive: true });
  const tmp = await Deno.makeTempDir({ prefix: "bench-" });
  const baseUrl = Deno.env.get("DATABASE_URL");
  const database = baseUrl ? await createDatabase(baseUrl) : undefined;
  const dbKind = database ? "postgres" : "pglite";
  // The database's CPU time is counted when its server runs on this machine: its backends serving
  // the bench database (PGlite runs inside each server process, so its time is the server's).
  const monitor = database && ["127.0.0.1", "localhost", "[::1]"].includes(new URL(baseUrl!).hostname)
    ? postgres(baseUrl!, { max: 1, onnotice: () => {} })
    : undefined;
  const dbPids = monitor &&
    (async () =>
      (await monitor<{ pid: number }[]>`
        select pid from pg_stat_activity where datname = ${database!.name} and pid <> pg_backend_pid()`)
        .map((r) => r.pid));

  // `--only=a,b`: scenarios whose name contains any of them.
  const matches = (name: string) =>
    !options.only || options.only.toLowerCase().split(",").some((part) => name.toLowerCase().includes(part.trim()));
  const scenarios = SCENARIOS.filter((s) => matches(s.name));
  // The sustained scenario's SMS go to a fake Twilio in this process (and then every SMS of the run does).
  const twilio = scenarios.some((s) => s.kind === "rate" && s.needs?.includes("twilio"))
    ? startTwilioProbe()
    : undefined;
  const inspectors: Inspector[] = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const inspector of inspectors) inspector.close();
    await stopAll({ kill: true });
    await twilio?.close();
    await monitor?.end();
    await database?.drop().catch((err) => console.error(`cannot drop database ${database.name}: ${err}`));
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  };
  const interrupted = async () => {
    await cleanup();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", interrupted);
  Deno.addSignalListener("SIGTERM", interrupted);

  const dbEnv = (name: string): Record<string, string> =>
    database ? { DATABASE_URL: database.url } : { PGLITE_DIR: `${tmp}/${name}-pg` };
  const neededBaselines = new Set<BaselineMode>(options.only ? [] : BASELINE_MODES);
  for (const s of scenarios) if (s.kind === "http") neededBaselines.add(s.baseline);
  if (options.diagnose) {
    for (const mode of DIAGNOSTIC_MODES) if (neededBaselines.has(DIAGNOSTIC_OF[mode])) neededBaselines.add(mode);
  }

  console.error(
    `bench: ${dbKind}${database ? ` (database ${database.name})` : ""}, connections ${
      options.connections.join(",")
    }, ` +
      `${options.durationSec}s per measurement, load generator ${GENERATOR_LABELS[options.load]}`,
  );
  const loadBefore = Deno.loadavg();
  if (loadBefore[0] > 1) {
    loud(
      `load average ${loadBefore[0].toFixed(1)} before the bench: other work on this machine will distort the figures`,
    );
  }
  const rows: Row[] = [];
  const rates = new Map<string, Row>();
  let peakRss: number | undefined;
  let service: ServerProcess | undefined;
  // Each baseline is measured just before the first scenario compared with it, so that both see
  // the machine in the same state; the rest run at the end.
  const baselineServers = new Map<BaselineMode, ServerProcess>();
  // With --profile every server runs under --inspect and each measured run is profiled.
  const inspectPorts = new Map<string, number>();
  const inspectArgs = (name: string): string[] => {
    if (!options.profile) return [];
    const port = freePort();
    inspectPorts.set(name, port);
    return [`--inspect=127.0.0.1:${port}`];
  };
  // One inspector session per process (two baselines may share one process, see serverOf).
  const sessions = new Map<string, Promise<Inspector>>();
  const targetOf = async (server: ServerProcess): Promise<Target> => {
    const port = inspectPorts.get(server.name);
    let session = sessions.get(server.name);
    if (port !== undefined && !session) {
      session = Inspector.connect(port);
      sessions.set(server.name, session);
      inspectors.push(await session);
    }
    const inspector = await session;
    return { url: server.url, pid: server.pid, dbPids, name: server.name, inspector, outDir };
  };
  // Baseline servers stay up until the end: --rounds measures them again beside each scenario.
  const runners = new Map<BaselineMode, BaselineRunner>();
  const baseline = async (mode: BaselineMode) => {
    const server = baselineServers.get(mode);
    if (!server || runners.has(mode)) return runners.get(mode);
    const runner = baselineRunner(mode, await targetOf(server), options, runId);
    runners.set(mode, runner);
    rows.push(...await runBaseline(runner, options, rates));
    // A diagnostic server runs right after the baseline it is compared with.
    for (const [diagnostic, of] of Object.entries(DIAGNOSTIC_OF)) {
      if (of === mode) await baseline(diagnostic as BaselineMode);
    }
    return runner;
  };
  try {
    const adminToken = randomHex(24);
    const serviceEnv: Record<string, string> = {
      ...cleanEnv(),
      ...dbEnv("service"),
      KV_PATH: `${tmp}/service.kv`,
      LOG_LEVEL: "warn",
      DEMO_SEED: "0",
      ADMIN_TOKEN: adminToken,
      RATE_LIMIT_ENTERPRISE: "1000000000",
      TRIGGER_RATE_LIMIT_ENTERPRISE: "1000000000",
      // OTP send limits off: the OTP send scenario opens a session per request (see bench/otp.ts).
      OTP_IP_LIMIT_PER_HOUR: "0",
      OTP_RECIPIENT_LIMIT: "0",
      OTP_ACTIVE_SESSION_LIMIT: "0",
      // The webhook fan-out's endpoint is on loopback, in the bench's own process.
      WEBHOOK_ALLOW_PRIVATE: "1",
      ...twilio?.env,
      ...options.serviceEnv,
    };
    const v8Flags = await startTaskV8Flags(root);
    const start = () =>
      startServer({
        name: "service",
        args: [
          "run",
          "-A",
          ...v8Flags,
          `--config=${root}deno.json`,
          ...inspectArgs("service"),
          options.entry ?? `${root}main.ts`,
        ],
        env: serviceEnv,
        readyPath: "/healthz",
        logDir,
      });
    const modes = [...BASELINE_MODES, ...DIAGNOSTIC_MODES].filter((m) => neededBaselines.has(m));
    const processes = [...new Set(modes.map(serverOf))];
    // Every server starts at once (embedded Postgres start-up is slow); they idle until measured.
    const [started, ...baselines] = await Promise.all([
      start(),
      ...processes.map((mode) =>
        startServer({
          name: `baseline-${mode}`,
          args: [
            "run",
            "-A",
            `--config=${root}deno.json`,
            ...inspectArgs(`baseline-${mode}`),
            new URL("./baselines.ts", import.meta.url).pathname,
            mode,
          ],
          env: { ...cleanEnv(), ...dbEnv(`baseline-${mode}`), KV_PATH: `${tmp}/baseline-${mode}.kv` },
          readyPath: "/ready",
          logDir,
        })
      ),
    ]);
    service = started;
    // Started once the service has migrated the database: the worker alone on the same data.
    if (options.workerProcess) {
      await startServer({
        name: "worker",
        args: ["run", "-A", ...v8Flags, `--config=${root}deno.json`, `${root}worker/main.ts`],
        env: serviceEnv,
        logDir,
      });
    }
    for (const mode of modes) baselineServers.set(mode, baselines[processes.indexOf(serverOf(mode))]);
    progress(`service and ${processes.length} baseline servers ready`);
    const teamName = `bench-${runId}`;
    let created = await teamViaAdmin(service.url, adminToken, teamName);
    if (!created) {
      progress("admin API has no POST /admin/v1/teams yet: creating the team in the database");
      await service.stop();
      created = await teamViaDatabase(serviceEnv, teamName);
      service = await start();
    }
    const ctx: BenchContext = {
      url: service.url,
      adminToken,
      team: created.team,
      keys: created.keys,
      runId,
      durationSec: options.durationSec,
      state: {},
      servicePid: service.pid,
      quick: options.quick,
      loadSeconds: (options.warmupSec + options.durationSec) * options.connections.length * options.rounds,
      databaseUrl: database?.url,
      pg: monitor ? pgProbe(monitor, database!.name) : undefined,
      twilio,
      sustained: { rates: options.sustainedRates, seconds: options.sustainedSec },
      fanoutContacts: options.fanout,
    };
    const serviceTarget = await targetOf(service);
    for (const scenario of scenarios) {
      if (scenario.kind === "http") {
        const runner = await baseline(scenario.baseline);
        const final = scenario === scenarios.at(-1);
        rows.push(...await runHttpScenario(scenario, ctx, serviceTarget, options, rates, runner, final));
      } else {
        rows.push(...await runRateScenario(scenario, ctx, serviceTarget));
      }
    }
    for (const mode of modes) await baseline(mode);
    peakRss = await service.peakRssMiB();
  } finally {
    await cleanup();
  }

  // Rate rows (which run first, see SCENARIOS) close the table.
  rows.sort((a, b) => Number(a.kind === "rate") - Number(b.kind === "rate"));
  const table = renderTable(rows);
  const rss = `Service peak RSS (VmHWM): ${peakRss === undefined ? "unknown" : `${peakRss.toFixed(0)} MiB`}`;
  const load = `load average ${loadBefore[0].toFixed(1)} → ${Deno.loadavg()[0].toFixed(1)}`;
  const verdicts = checkTargets(rows);
  console.log(`\n${table}\n\n${rss}; database: ${dbKind}; ${options.durationSec}s per measurement; ${load}.`);
  if (verdicts.length > 0) console.log(`\nTargets:\n${renderVerdicts(verdicts)}`);
  const report = {
    date: new Date().toISOString(),
    database: dbKind,
    quick: options.quick,
    connections: options.connections,
    durationSec: options.durationSec,
    rounds: options.rounds,
    loadGenerator: GENERATOR_LABELS[options.load],
    deno: Deno.version.deno,
    servicePeakRssMiB: peakRss,
    serviceEnvOverrides: options.serviceEnv,
    /** Figures taken while the service was being profiled read lower than normal ones. */
    profiled: options.profile,
    elapsedSec: (performance.now() - started) / 1000,
    /** 1-minute load average before and after: above ~1 on 2 cores, other work shared the machine. */
    loadAverage: { before: loadBefore[0], after: Deno.loadavg()[0] },
    rows,
    targets: verdicts,
  };
  await Deno.writeTextFile(`${outDir}/last.json`, JSON.stringify(report, null, 2) + "\n");
  console.error(`wrote .bench/last.json in ${report.elapsedSec.toFixed(1)} s`);
  Deno.removeSignalListener("SIGINT", interrupted);
  Deno.removeSignalListener("SIGTERM", interrupted);
  if (rows.some((r) => r.errors > 0)) Deno.exitCode = 1;
}

if (import.meta.main) {
  await main().catch((err) => {
    console.error(`\nbench failed: ${err instanceof Error ? err.message : err}`);
    Deno.exit(1);
  });
}
