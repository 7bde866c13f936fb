/**
 * Crash test (`deno task test:crash`): starts the real service as child processes on fresh data,
 * fires a 20,000-contact email send, a two-step workflow to 2,000 contacts, an SMS send to them and a
 * burst of direct emails, and disrupts the service while they run (run.ts, disruptions.ts). Emails go
 * to the outbox; the SMS go through the real Twilio provider to a fake Twilio API in this process,
 * which answers after TWILIO_LATENCY_MS (so that kills land while SMS are in Twilio's hands). Then
 * every eligible recipient must have received exactly one email per send and step and at most one
 * SMS (an SMS a kill left in Twilio's hands is looked up in Twilio's log: recorded sent with its sid
 * when Twilio has it, else failed with that reason and refunded; none that Twilio accepted may end
 * failed), every trigger must be completed with exact counters, and the wallet must equal its ledger
 * and the SMS sent — also after one more start that runs every queue message the disruption left
 * behind (late redeliveries). A second team's SMS send goes through two Twilio accounts of its own,
 * each on a fake Twilio (failover.ts); the first answers 503 to every third number, which fails over
 * to the second, and the last kill waits until that send is under way: no number may be accepted by
 * both, each SMS recorded sent must name the account that accepted it with its sid and attempts, the
 * others failed as possibly sent and accepted by neither, its wallet exact (verify_failover.ts). A webhook endpoint in this process must have received every
 * trigger.completed, workflow.completed and message.failed of the run, each object under one event
 * id, and nothing may be left in the event outbox (webhooks.ts). Exits 1 with the details otherwise.
 *
 * The runs (CRASH_RUNS, comma-separated; by default `kills`, plus `replicas` with DATABASE_URL, plus
 * `restart` with CRASH_PG_RESTART=1):
 * - `kills`: one process (ENGINE from the environment, kv by default) SIGKILLed CRASH_KILLS times at
 *   seeded random moments and restarted on the same data each time;
 * - `replicas`: three replicas with ENGINE=postgres on one database of DATABASE_URL's server,
 *   CRASH_REPLICA_KILLS SIGKILLs among them (one replica, every third time two), the others going on
 *   while the victims are down, then the victims restarted (a smaller scenario);
 * - `restart` (`restart-kv`): one process with ENGINE=postgres (ENGINE=kv) on a PostgreSQL server of
 *   the test's own (initdb in a temporary folder, private_postgres.ts), which is stopped (immediate)
 *   and started again CRASH_PG_RESTARTS times under load: /healthz must answer 503 while it is down
 *   and 200 after, and the service must deliver again by itself (a smaller scenario).
 *
 * Settings (env): CRASH_SEED (7), CRASH_KILLS (4), CRASH_REPLICA_KILLS (4), CRASH_PG_RESTARTS (2),
 * CRASH_CONTACTS (20000), CRASH_WORKFLOW (2000), CRASH_FAILOVER (1000, the failover team's contacts; 500
 * in the smaller scenario), CRASH_TIMEOUT_S (300, the wait for completion after
 * the disruption), CRASH_MAX_RECOVERY_S (45, restart to delivering again), CRASH_TWILIO_LATENCY_MS
 * (25: longer leaves more SMS in Twilio's hands at a kill), CRASH_KEEP=1 keeps the data folders;
 * DATABASE_URL runs `kills` and `replicas` on that server in fresh databases (dropped at the end),
 * else `kills` on PGlite.
 */
import { killAndRestart, killReplicas, restartDatabase, seededRandom } from "./disruptions.ts";
import { PrivatePostgres } from "./private_postgres.ts";
import { type RunPlan, runScenario } from "./run.ts";
import { freshDatabase } from "./service.ts";

const env = Deno.env.toObject();
const SEED = Number(env.CRASH_SEED ?? 7);
const KILLS = Number(env.CRASH_KILLS ?? 4);
const REPLICA_KILLS = Number(env.CRASH_REPLICA_KILLS ?? 4);
const PG_RESTARTS = Number(env.CRASH_PG_RESTARTS ?? 2);
const SIZE = {
  contacts: Number(env.CRASH_CONTACTS ?? 20_000),
  workflow: Number(env.CRASH_WORKFLOW ?? 2_000),
  inactiveEvery: 50,
  failover: Math.max(1, Number(env.CRASH_FAILOVER ?? 1_000)),
};
/** The replica and restart runs: enough to be sending through every disruption, no more (CI's time). */
const SMALL = {
  contacts: Math.min(SIZE.contacts, 5_000),
  workflow: Math.min(SIZE.workflow, 1_000),
  inactiveEvery: 50,
  failover: Math.min(SIZE.failover, 500),
};
const COMMON = {
  timeoutMs: Number(env.CRASH_TIMEOUT_S ?? 300) * 1_000,
  /** Delivery must resume within this after a restart (the jobs a kill cut off are taken up again). */
  maxRecoveryMs: Number(env.CRASH_MAX_RECOVERY_S ?? 45) * 1_000,
  twilioLatencyMs: Number(env.CRASH_TWILIO_LATENCY_MS ?? 25),
};
const DEFAULT_RUNS = [
  "kills",
  ...(env.DATABASE_URL ? ["replicas"] : []),
  ...(env.CRASH_PG_RESTART === "1" ? ["restart"] : []),
];
const RUNS = env.CRASH_RUNS ? env.CRASH_RUNS.split(",").map((r) => r.trim()) : DEFAULT_RUNS;

/** A run and what it needs set up and torn down around it (a database). */
interface Run {
  name: string;
  /** The plan, with its teardown; a string says why the run cannot be made here. */
  prepare(): Promise<{ plan: RunPlan; teardown: () => Promise<void> } | string>;
}

/** The restart run under `engine`: one process on a PostgreSQL server of the test's own, which is stopped and started. */
function restartRun(engine: "postgres" | "kv", random: () => number): Run {
  return {
    name: `restart (ENGINE=${engine})`,
    async prepare() {
      const parent = await Deno.makeTempDir({ prefix: "crash_pg_" });
      const server = await PrivatePostgres.create(parent);
      if (typeof server === "string") return `the restart run needs PostgreSQL installed: ${server}`;
      const database = await freshDatabase("crash_restart", server.url);
      return {
        plan: {
          ...COMMON,
          label: `crash test, ${PG_RESTARTS} restarts of PostgreSQL under ENGINE=${engine} (seed ${SEED})`,
          size: SMALL,
          engine,
          replicas: 1,
          databaseUrl: database.url,
          disrupt: restartDatabase(server, PG_RESTARTS, random),
        },
        teardown: async () => {
          await database.drop().catch(() => {});
          await server.remove();
          await Deno.remove(parent, { recursive: true });
        },
      };
    },
  };
}

function runs(): Run[] {
  const random = seededRandom(SEED);
  const onServer = async (prefix: string) => {
    if (!env.DATABASE_URL) return undefined;
    return await freshDatabase(prefix, env.DATABASE_URL);
  };
  const all: Record<string, Run[]> = {
    kills: [{
      name: "kills",
      async prepare() {
        const database = await onServer("crash");
        return {
          plan: {
            ...COMMON,
            label: `crash test, ${KILLS} kills of one process (seed ${SEED})`,
            size: SIZE,
            engine: env.ENGINE === "postgres" ? "postgres" : "kv",
            replicas: 1,
            databaseUrl: database?.url,
            disrupt: killAndRestart(KILLS, random),
          },
          teardown: async () => await database?.drop(),
        };
      },
    }],
    replicas: [{
      name: "replicas",
      async prepare() {
        const database = await onServer("crash_replicas");
        if (!database) return "the replicas run needs DATABASE_URL (a PostgreSQL server)";
        return {
          plan: {
            ...COMMON,
            label: `crash test, ${REPLICA_KILLS} kills among three replicas (seed ${SEED})`,
            size: SMALL,
            engine: "postgres",
            replicas: 3,
            databaseUrl: database.url,
            disrupt: killReplicas(REPLICA_KILLS, random),
          },
          teardown: () => database.drop(),
        };
      },
    }],
    restart: [restartRun("postgres", random)],
    "restart-kv": [restartRun("kv", random)],
  };
  return RUNS.flatMap((name) => {
    if (!all[name]) throw new Error(`Unknown crash run ${name} (CRASH_RUNS): one of ${Object.keys(all).join(", ")}`);
    return all[name];
  });
}

async function main(): Promise<number> {
  const started = Date.now();
  const failed: string[] = [];
  const summary: string[] = [];
  for (const run of runs()) {
    const runStarted = Date.now();
    const prepared = await run.prepare();
    if (typeof prepared === "string") {
      console.error(`crash run ${run.name}: cannot run: ${prepared}`);
      failed.push(run.name);
      continue;
    }
    let problems: string[];
    let dir: string | undefined;
    try {
      ({ problems, dir } = await runScenario(prepared.plan));
    } finally {
      await prepared.teardown().catch((err) => console.error(`crash run ${run.name}: cannot tear down: ${err}`));
    }
    summary.push(
      `${run.name}: ${problems.length ? "FAILED" : "passed"} in ${((Date.now() - runStarted) / 1000).toFixed(1)} s`,
    );
    if (problems.length > 0) {
      console.error(`CRASH RUN ${run.name} FAILED (seed ${SEED}):\n  ${problems.join("\n  ")}`);
      console.error(`data kept in ${dir}`);
      failed.push(run.name);
    } else if (env.CRASH_KEEP !== "1") {
      await Deno.remove(dir, { recursive: true });
    }
  }
  for (const line of summary) console.log(line);
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (failed.length) {
    console.error(`CRASH TEST FAILED: ${failed.join(", ")}`);
    return 1;
  }
  console.log(
    "crash test passed: exactly one email per send, step and recipient, at most one SMS; exact counters and wallet; " +
      "every webhook event",
  );
  return 0;
}

if (import.meta.main) Deno.exit(await main());
