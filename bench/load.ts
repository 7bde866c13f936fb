/**
 * The load generators: `wrk` (bench/wrk.ts), in a process of its own, when it is installed; else
 * autocannon's programmatic API, run inside the bench's Deno process (verified to work under Deno 2:
 * per-request bodies via `setupRequest`, status and timing events).
 */
import autocannon from "autocannon";
import { percentile } from "./percentile.ts";
import { prepareWrk, wrkInstalled } from "./wrk.ts";

/** One request to send: built afresh for every request, so bodies and paths can vary. */
export interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string;
  headers?: Record<string, string>;
  /** Serialised as JSON. */
  body?: unknown;
}

/** What one load run measured. */
export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers outside 2xx. */
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  /** Count of answers by status code. */
  statuses: Record<string, number>;
}

/** Either a fixed list (prebuilt once; each connection cycles through it) or one request per call. */
export type Requests = RequestSpec[] | ((seq: number) => RequestSpec);

/** Which program sends the load. */
export type LoadGenerator = "wrk" | "autocannon";

/** wrk where it is installed (`apt-get install wrk`): it leaves more of the machine to the servers. */
export function defaultGenerator(): LoadGenerator {
  return wrkInstalled() ? "wrk" : "autocannon";
}

/** What each generator is, for the report. */
export const GENERATOR_LABELS: Record<LoadGenerator, string> = {
  wrk: "wrk (one thread, its own process; requests written out before each run)",
  autocannon: "autocannon (programmatic, in the bench's Deno process)",
};

export interface LoadOptions {
  /** Default: autocannon. */
  generator?: LoadGenerator;
  url: string;
  connections: number;
  durationSec: number;
  /**
   * A fixed list costs the load generator almost nothing; a factory is called for every request
   * (unique bodies) and costs it a few microseconds each, so compare like with like.
   */
  requests: Requests;
}

function toAutocannon(spec: RequestSpec) {
  const headers: Record<string, string> = { ...spec.headers };
  if (spec.body !== undefined) headers["content-type"] = "application/json";
  return {
    method: spec.method,
    path: spec.path,
    headers,
    body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
  };
}

// deno-lint-ignore no-explicit-any
type AnyRequest = any;

/** Drives `url` with `connections` keep-alive connections for `durationSec` seconds. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  return await (await prepareLoad(options))();
}

/** Prepares a run (wrk's requests are written out first), to start when wanted. */
export async function prepareLoad(options: LoadOptions): Promise<() => Promise<LoadResult>> {
  return options.generator === "wrk" ? await prepareWrk(options) : () => runAutocannon(options);
}

async function runAutocannon(options: LoadOptions): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  const factory = typeof options.requests === "function" ? options.requests : undefined;
  let seq = 0;
  const setupRequest = (req: AnyRequest) => {
    const spec = factory!(seq++);
    req.method = spec.method;
    req.path = spec.path;
    if (spec.headers) Object.assign(req.headers, spec.headers);
    if (spec.body !== undefined) {
      req.body = JSON.stringify(spec.body);
      req.headers["content-type"] = "application/json";
    }
    return req;
  };
  const requests = factory ? [{ setupRequest }] : (options.requests as RequestSpec[]).map(toAutocannon);
  const started = performance.now();
  const instance = autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationSec,
    // autocannon ends a run at its first sample tick past `duration` (default every 1 s: a 0.25 s
    // warm-up ran 1 s); our figures come from our own counts and the run's start and finish.
    sampleInt: 100,
    requests,
  });
  // Our own latency record: autocannon's histogram keeps whole milliseconds only.
  instance.on("response", (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    if (count === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[count++] = responseTime;
  });
  const result = await instance;
  const seconds = result.start && result.finish
    ? (new Date(result.finish).getTime() - new Date(result.start).getTime()) / 1000
    : (performance.now() - started) / 1000;
  const sorted = latencies.subarray(0, count).sort();
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) {
    statuses[code] = (stat as { count: number }).count;
  }
  const answered = Object.values(statuses).reduce((a, b) => a + b, 0);
  return {
    requests: answered,
    seconds,
    rps: answered / seconds,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statuses,
  };
}

/** Sends one request with fetch (probes and error samples). */
export async function sendOnce(url: string, spec: RequestSpec): Promise<{ status: number; body: string }> {
  const headers: Record<string, string> = { ...spec.headers };
  if (spec.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(url + spec.path, {
    method: spec.method,
    headers,
    body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
  });
  return { status: res.status, body: await res.text() };
}
