/**
 * What the bench measures. To add an endpoint family, append a scenario to SCENARIOS:
 * - kind "http": a request factory driven by autocannon at each connection count, compared
 *   with a baseline server (bench/baselines.ts);
 * - kind "rate": a function that does some work against the running service (fan-out
 *   deliveries, workflow executions …) and reports how many things it did in how long.
 */
import type { BaselineMode } from "./baselines.ts";
import { type RequestSpec, sendOnce } from "./load.ts";

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
}

/** What a rate scenario did. */
export interface RateResult {
  count: number;
  seconds: number;
  errors?: number;
  p50Ms?: number;
  p99Ms?: number;
}

/** A non-HTTP measurement: runs a function and reports a rate (e.g. deliveries/s). */
export interface RateScenario {
  kind: "rate";
  name: string;
  /** What is counted, e.g. "deliveries". */
  unit: string;
  setup?: (ctx: BenchContext) => Promise<void>;
  run: (ctx: BenchContext) => Promise<RateResult>;
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

const CONTACTS_TO_READ = 100;

/** Every scenario, in the order they run. */
export const SCENARIOS: Scenario[] = [
  {
    kind: "http",
    name: "GET /healthz",
    baseline: "hono",
    requests: () => [{ method: "GET", path: "/healthz" }],
  },
  {
    kind: "http",
    name: "contact create",
    baseline: "pg-insert",
    requests: (ctx) => (seq) => ({
      method: "POST",
      path: "/api/v1/contacts",
      headers: withKey(ctx),
      body: { email: `bench-${ctx.runId}-${seq}@example.com`, first_name: "Bench" },
    }),
  },
  {
    kind: "http",
    name: "contact get",
    baseline: "pg-select",
    async setup(ctx) {
      const ids: string[] = [];
      for (let n = 0; n < CONTACTS_TO_READ; n++) {
        const contact = await call<{ id: string }>(ctx, {
          method: "POST",
          path: "/api/v1/contacts",
          headers: withKey(ctx),
          body: { email: `read-${ctx.runId}-${n}@example.com`, first_name: "Reader" },
        });
        ids.push(contact.id);
      }
      ctx.state.contactIds = ids;
    },
    requests: (ctx) =>
      (ctx.state.contactIds as string[]).map((id) => ({
        method: "GET",
        path: `/api/v1/contacts/${id}`,
        headers: withKey(ctx),
      })),
  },
  // Later: email/SMS send, OTP send+verify, event send (kind "http"); fan-out deliveries/s and
  // workflow executions/s (kind "rate": trigger the work, poll until done, return count/seconds).
];
