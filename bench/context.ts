/** What scenarios are made of: the context they act in, their kinds, and helpers to call the service. */
import type { BaselineMode } from "./baselines.ts";
import { type RequestSpec, sendOnce } from "./load.ts";
import type { PgProbe } from "./pg_cost.ts";
import type { TwilioProbe } from "./twilio_probe.ts";

/** What every scenario can use: the running service and a team on it. */
export interface BenchContext {
  /** Base URL of the service, e.g. http://127.0.0.1:41234. */
  url: string;
  adminToken: string;
  team: { id: string; name: string; plan: string };
  keys: { live: string; test: string; publishable: string };
  /** A random tag of this run, for unique emails and names. */
  runId: string;
  /** Seconds a measurement lasts (rate scenarios should aim for about this long). */
  durationSec: number;
  /** Values a scenario's setup leaves for its requests (and for later scenarios). */
  state: Record<string, unknown>;
  /** The service's process id (for its peak RSS). */
  servicePid: number;
  /** `--quick`: rate scenarios use smaller counts. */
  quick: boolean;
  /** Seconds of load an HTTP scenario receives in all: warm-ups, every connection count and round. */
  loadSeconds: number;
  /** The bench database, when it is a real server (DATABASE_URL): setup may write to it directly. */
  databaseUrl?: string;
  /** The bench database's CPU and WAL, when its server runs on this machine (see pg_cost.ts). */
  pg?: PgProbe;
  /** The fake Twilio the service sends SMS to, when a scenario that needs it runs (see twilio_probe.ts). */
  twilio?: TwilioProbe;
  /** The sustained scenario's offered rates (sends/s, in order) and seconds at each. */
  sustained: { rates: number[]; seconds: number };
  /** `--fanout=N`: also fan out to N contacts, beside the usual size. */
  fanoutContacts?: number;
}

/** An HTTP endpoint under load. */
export interface HttpScenario {
  kind: "http";
  name: string;
  /** The server whose req/s this scenario's req/s is divided by. */
  baseline: BaselineMode;
  /** Runs once before the measurement, e.g. creates the rows the requests read. */
  setup?: (ctx: BenchContext) => Promise<void>;
  /**
   * The requests: a fixed list (built once after setup, cycled by every connection; cheapest for the
   * load generator) or `(seq) => request`, called for every request (seq is unique across the warm-up
   * and every connection count: use it for unique emails). The baseline should use the same form.
   */
  requests: (ctx: BenchContext) => RequestSpec[] | ((seq: number) => RequestSpec);
  /**
   * Runs after each measurement: e.g. waits until the work the requests queued is done, so that it
   * does not share the machine with the next measurement. What it answers goes to the row's notes.
   */
  settle?: (ctx: BenchContext) => Promise<string | undefined>;
}

/** What a rate scenario did. */
export interface RateResult {
  /** The row's name, when a scenario gives several rows (default: the scenario's). */
  name?: string;
  count: number;
  seconds: number;
  errors?: number;
  p50Ms?: number;
  p99Ms?: number;
  /** Shown in the row's notes (e.g. peak RSS). */
  note?: string;
  /** A rate of the same run to compare with instead of the scenario's target (e.g. the smaller fan-out's). */
  compareTo?: { label: string; rate: number };
}

/** A non-HTTP measurement: runs a function and reports a rate (e.g. deliveries/s). */
export interface RateScenario {
  kind: "rate";
  name: string;
  /** What is counted, e.g. "deliveries". */
  unit: string;
  /** The rate the issue asks for: the row's ratio is to it. */
  target?: number;
  /** False skips the scenario quietly (an opt-in measurement that was not asked for). */
  enabled?: (ctx: BenchContext) => boolean;
  /** Services the bench must start beside the service: "twilio", a fake Twilio its SMS go to. */
  needs?: "twilio"[];
  setup?: (ctx: BenchContext) => Promise<void>;
  /** One result, or several rows (each named). */
  run: (ctx: BenchContext) => Promise<RateResult | RateResult[]>;
}

/** A measurement the bench runs. */
export type Scenario = HttpScenario | RateScenario;

/** Headers of a request authenticated with the team's live secret key. */
export function withKey(ctx: BenchContext, extra: Record<string, string> = {}): Record<string, string> {
  return { "x-api-key": ctx.keys.live, ...extra };
}

/** Sends one request to the service and insists on a 2xx answer; returns the parsed body. */
export async function call<T = unknown>(ctx: BenchContext, spec: RequestSpec): Promise<T> {
  const res = await sendOnce(ctx.url, spec);
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${spec.method} ${spec.path} answered ${res.status}: ${res.body.slice(0, 300)}`);
  }
  return JSON.parse(res.body) as T;
}
