/** The bench's command-line options and the environment its servers get. */
import { defaultGenerator, type LoadGenerator } from "./load.ts";
import { SUSTAINED_RATES, SUSTAINED_SECONDS } from "./sustained.ts";

/** What `deno task bench` was asked to do. */
export interface Options {
  quick: boolean;
  connections: number[];
  durationSec: number;
  warmupSec: number;
  only?: string;
  /** Profile the service (CPU) during each scenario's measurements. */
  profile: boolean;
  /** The service's entry point (another composition, for experiments); default main.ts. */
  entry?: string;
  /**
   * Also run `worker/main.ts` as a process of its own beside the service, on the same database and KV
   * (with `--entry=api/main.ts`: the roles split over two processes, see shared/roles.ts).
   */
  workerProcess: boolean;
  /** Also measure the diagnostic servers (the service's queries in a bare handler). */
  diagnose: boolean;
  /** Times each scenario alternates with its baseline at each connection count. */
  rounds: number;
  serviceEnv: Record<string, string>;
  /** `--load=wrk|autocannon`; default wrk where it is installed. */
  load: LoadGenerator;
  /** `--sustained=2000,4000`: the sustained scenario's offered rates (sends/s), in order. */
  sustainedRates: number[];
  /** `--sustained-seconds=60`: how long each offered rate lasts (10 with --quick). */
  sustainedSec: number;
  /** `--fanout=1000000`: also fan out to this many contacts, beside the usual size. */
  fanout?: number;
}

/** Parses the command line. */
export function parseArgs(args: string[]): Options {
  const value = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const quick = args.includes("--quick");
  const serviceEnv: Record<string, string> = {};
  for (const a of args.filter((a) => a.startsWith("--env="))) {
    const [k, ...v] = a.slice(6).split("=");
    serviceEnv[k] = v.join("=");
  }
  const durationSec = Number(value("duration") ?? (quick ? 1 : 5));
  const load = value("load") ?? defaultGenerator();
  if (load !== "wrk" && load !== "autocannon") throw new Error(`--load=${load}: wrk or autocannon`);
  return {
    quick,
    connections: (value("connections") ?? (quick ? "50" : "50,200")).split(",").map(Number),
    durationSec,
    warmupSec: quick ? 0.25 : 1,
    only: value("only"),
    profile: args.includes("--profile"),
    diagnose: args.includes("--diagnose"),
    entry: value("entry"),
    workerProcess: args.includes("--worker-process"),
    rounds: Math.max(1, Number(value("rounds") ?? 1)),
    serviceEnv,
    load,
    sustainedRates: value("sustained")?.split(",").map(Number) ?? SUSTAINED_RATES,
    sustainedSec: Number(value("sustained-seconds") ?? (quick ? SUSTAINED_SECONDS.quick : SUSTAINED_SECONDS.full)),
    fanout: value("fanout") === undefined ? undefined : Number(value("fanout")),
  };
}

/** Service settings (and provider secrets) the bench must not inherit from its own environment. */
const CONFIG_PREFIXES = [
  "RESEND_",
  "TWILIO_",
  "FCM_",
  "APNS_",
  "PRICE_",
  "RATE_LIMIT_",
  "OTP_",
  "EMAIL_",
  "SMS_",
  "WHATSAPP_",
  "PUSH_",
  "WEBHOOK_",
];
const CONFIG_KEYS = [
  "DATABASE_URL",
  "PGLITE_DIR",
  "KV_PATH",
  "ADMIN_TOKEN",
  "DEMO_SEED",
  "LOG_LEVEL",
  "PORT",
  "HOST",
  "TRUST_PROXY",
  "OTEL_DENO",
];

/** The bench's environment without any service setting (the servers get only what the bench sets). */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(Deno.env.toObject()).filter(([k]) =>
      !CONFIG_KEYS.includes(k) && !CONFIG_PREFIXES.some((p) => k.startsWith(p))
    ),
  );
}
