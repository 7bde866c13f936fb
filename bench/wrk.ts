/**
 * The load generator `wrk` (C, one thread, epoll; Debian's package `wrk`), in a process of its own.
 * It costs about a third of autocannon's CPU a request, and on a 2-core machine the generator's CPU
 * comes out of what the server under test can use. The requests are written out before the run as
 * raw HTTP, one after another in a file that wrk's Lua script reads as it sends them.
 */
import type { LoadOptions, LoadResult, RequestSpec } from "./load.ts";

/**
 * How many requests of a factory are written for each second of a run: twice what the fastest
 * factory scenario answers (the diagnostic group commit, about 30,000/s). A run that gets through
 * them all fails: past them the script would send bodies a second time.
 */
export const FACTORY_RATE = 60_000;

/**
 * wrk's script: requests read from the file as they are sent (each behind its length in 8 digits),
 * cycled; status counts; the result as one JSON line, with how many times the file started again.
 * Reading as it goes, not all at start: parsing 300,000 requests first kept wrk from starting for
 * most of a second, long enough for the service to take the pause for the end of a burst.
 */
const SCRIPT = `
local file
-- Globals, which thread:get reads.
wraps, statuses = 0, {}
function init(args)
  file = assert(io.open(args[1], "rb"))
end
function request()
  local length = file:read(8)
  if not length then
    file:seek("set", 0)
    wraps = wraps + 1
    length = file:read(8)
  end
  return file:read(tonumber(length))
end
function response(status)
  statuses[status] = (statuses[status] or 0) + 1
end
local thread
function setup(t)
  thread = t
end
function done(summary, latency)
  -- done() runs in the main script's state: the counts are the thread's (one thread).
  local statuses, wraps = thread:get("statuses"), thread:get("wraps")
  local parts = {}
  for k, v in pairs(statuses) do parts[#parts + 1] = string.format('"%d":%d', k, v) end
  local e = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"wraps":%d,"statuses":{%s}}\\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), wraps, table.concat(parts, ",")))
end
`;

/** True when `wrk` can be run here. */
export function wrkInstalled(): boolean {
  try {
    return new Deno.Command("wrk", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync().code <= 1;
  } catch {
    return false;
  }
}

const encoder = new TextEncoder();

/** One request as the bytes wrk writes: request line, Host, headers, a JSON body with its length. */
function raw(spec: RequestSpec, host: string): Uint8Array {
  const body = spec.body === undefined ? undefined : encoder.encode(JSON.stringify(spec.body));
  let head = `${spec.method} ${spec.path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [name, value] of Object.entries(spec.headers ?? {})) head += `${name}: ${value}\r\n`;
  if (body) head += `content-type: application/json\r\ncontent-length: ${body.length}\r\n`;
  const bytes = encoder.encode(`${head}\r\n`);
  if (!body) return bytes;
  const out = new Uint8Array(bytes.length + body.length);
  out.set(bytes);
  out.set(body, bytes.length);
  return out;
}

/** The file of requests, each behind its length: a fixed list once, a factory's for the whole run. */
async function writeRequests(options: LoadOptions, count: number, host: string): Promise<string> {
  const { requests } = options;
  const specs = typeof requests === "function" ? Array.from({ length: count }, (_, seq) => requests(seq)) : requests;
  const parts = specs.map((spec) => raw(spec, host));
  const out = new Uint8Array(parts.reduce((n, p) => n + 8 + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(encoder.encode(String(part.length).padStart(8, "0")), at);
    out.set(part, at + 8);
    at += 8 + part.length;
  }
  const file = await Deno.makeTempFile({ prefix: "bench-wrk-", suffix: ".http" });
  await Deno.writeFile(file, out);
  return file;
}

/**
 * Writes out a wrk run of `url`: `connections` keep-alive connections, one thread, whole seconds (at
 * least 1). Answers the run, to start when wanted (writing a factory's requests takes a moment).
 */
export async function prepareWrk(
  options: LoadOptions,
  factoryRate = FACTORY_RATE,
): Promise<() => Promise<LoadResult>> {
  const seconds = Math.max(1, Math.round(options.durationSec));
  const count = seconds * factoryRate;
  const url = new URL(options.url);
  const dir = await Deno.makeTempDir({ prefix: "bench-wrk-" });
  const script = `${dir}/requests.lua`;
  await Deno.writeTextFile(script, SCRIPT);
  const file = await writeRequests(options, count, url.host);
  return () => runWrk(options, { seconds, count, url, dir, script, file });
}

async function runWrk(
  options: LoadOptions,
  run: { seconds: number; count: number; url: URL; dir: string; script: string; file: string },
): Promise<LoadResult> {
  const { seconds, count, url, dir, script, file } = run;
  try {
    const out = await new Deno.Command("wrk", {
      args: [
        "-t1",
        `-c${options.connections}`,
        `-d${seconds}s`,
        "--timeout",
        "10s",
        "-s",
        script,
        url.origin,
        "--",
        file,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    const line = text.split("\n").find((l) => l.startsWith("WRK_RESULT "));
    if (!out.success || !line) {
      throw new Error(`wrk failed (exit ${out.code}): ${new TextDecoder().decode(out.stderr)}${text}`);
    }
    const r = JSON.parse(line.slice("WRK_RESULT ".length)) as {
      requests: number;
      duration_us: number;
      errors: number;
      p50_us: number;
      p99_us: number;
      wraps: number;
      statuses: Record<string, number>;
    };
    if (typeof options.requests === "function" && r.wraps > 0) {
      throw new Error(`wrk sent all ${count} requests written for the run: bodies would repeat`);
    }
    const elapsed = r.duration_us / 1e6;
    const non2xx = Object.entries(r.statuses).reduce((n, [code, count]) => n + (code.startsWith("2") ? 0 : count), 0);
    return {
      requests: r.requests,
      seconds: elapsed,
      rps: r.requests / elapsed,
      p50Ms: r.p50_us / 1000,
      p99Ms: r.p99_us / 1000,
      non2xx,
      errors: r.errors,
      statuses: r.statuses,
    };
  } finally {
    await Deno.remove(file).catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
