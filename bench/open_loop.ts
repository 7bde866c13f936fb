/**
 * An open-loop load generator, run as a process of its own (`deno run bench/open_loop.ts '<json>'`):
 * request n is due at `start + n / rate` and is written at that time whether or not earlier ones were
 * answered, and its latency runs from that due time, so a service that falls behind shows it in the
 * latency instead of slowing the load down (coordinated omission, which a closed-loop generator such
 * as wrk or autocannon hides). Requests are raw HTTP/1.1, pipelined over a fixed set of keep-alive
 * connections, built from a template, so that the generator stays light on a machine whose two cores
 * the service needs (about 20 µs of CPU a request at 12,000/s against a bare Deno.serve, a quarter of a
 * core; see bench/README.md).
 *
 * Output on stdout, one JSON line each: `{"type":"tick","at":…,"sent":…,"ok":…}` every
 * TICK_MS while the load runs (cumulative counts), then `{"type":"done",…}` (a GeneratorResult).
 */
import { percentile } from "./percentile.ts";

/** What the generator is asked to send. */
export interface GeneratorPlan {
  /** Base URL of the service, `http://127.0.0.1:<port>`. */
  url: string;
  method: "POST";
  path: string;
  headers: Record<string, string>;
  /**
   * The JSON body, in which `%SEQ%` is replaced by the request's number (at least 7 digits, zero-padded:
   * a phone number's tail) and `%AT%` by its due time
   * (ms since the epoch, to 0.1 ms), so that whoever receives what it caused can time it.
   */
  bodyTemplate: string;
  /** Requests a second. */
  rate: number;
  durationSec: number;
  /** Keep-alive connections, used round robin. */
  connections: number;
  /** The first request number (so that numbers stay unique over several runs). */
  firstSeq?: number;
  /** How long to wait for the last answers once the schedule has ended. */
  graceSec?: number;
}

/** What a run did. */
export interface GeneratorResult {
  type: "done";
  /** Epoch ms of the first due time. */
  startedAt: number;
  sent: number;
  /** Answers in 2xx. */
  ok: number;
  /** Answers by status code. */
  statuses: Record<string, number>;
  /** Requests written but never answered (connection lost, or still waiting after the grace time). */
  unanswered: number;
  /** From the due time to the answer. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Epoch ms of the last answer. */
  lastAnswerAt: number;
  /** The generator's own CPU seconds (user + system) from its first request on (start-up left out). */
  cpuSeconds: number;
  /** How far behind its schedule the generator itself was at worst, ms (its own lateness, not the service's). */
  maxLagMs: number;
}

/** A progress line: cumulative counts at `at` (epoch ms). */
export interface GeneratorTick {
  type: "tick";
  at: number;
  sent: number;
  ok: number;
}

/** Milliseconds between progress lines. */
export const TICK_MS = 250;

/** Epoch milliseconds with sub-millisecond precision (comparable across processes of one machine). */
export const epochMs = () => performance.timeOrigin + performance.now();

/**
 * Splits HTTP/1.1 responses out of a byte stream, in order: each complete one is reported with its
 * status; bytes of an incomplete one are kept for the next chunk. Only `content-length` bodies (what
 * Deno.serve sends for a JSON answer); a chunked answer is an error.
 */
export class ResponseParser {
  #buffer = new Uint8Array(0);
  readonly #decoder = new TextDecoder("latin1");

  /** Feeds a chunk; calls `onResponse(status)` for each response it completes. */
  push(chunk: Uint8Array, onResponse: (status: number) => void): void {
    let buf = chunk;
    if (this.#buffer.length > 0) {
      buf = new Uint8Array(this.#buffer.length + chunk.length);
      buf.set(this.#buffer);
      buf.set(chunk, this.#buffer.length);
    }
    let at = 0;
    while (true) {
      const headEnd = headerEnd(buf, at);
      if (headEnd < 0) break;
      const head = this.#decoder.decode(buf.subarray(at, headEnd));
      if (/\r\ntransfer-encoding:\s*chunked/i.test(head)) throw new Error("chunked answers are not supported");
      const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
      const end = headEnd + 4 + length;
      if (end > buf.length) break;
      onResponse(Number(head.slice(9, 12)));
      at = end;
    }
    this.#buffer = at === buf.length ? new Uint8Array(0) : buf.slice(at);
  }
}

/** Index of the `\r\n\r\n` that ends a header block starting at `from`, or -1. */
function headerEnd(buf: Uint8Array, from: number): number {
  for (let i = from; i + 3 < buf.length; i++) {
    if (buf[i] === 13 && buf[i + 1] === 10 && buf[i + 2] === 13 && buf[i + 3] === 10) return i;
  }
  return -1;
}

/** The due time of request `n` (0-based) of a run that starts at `start` at `rate` a second. */
export function dueAt(start: number, rate: number, n: number): number {
  return start + (n * 1000) / rate;
}

/** Reads this process's CPU seconds from /proc (0 where there is none). */
function ownCpuSeconds(): number {
  try {
    const stat = Deno.readTextFileSync("/proc/self/stat");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** One keep-alive connection: requests written in order, answers matched to them in order. */
class Connection {
  readonly due: number[] = [];
  #pending: Uint8Array[] = [];
  #writing = false;
  closed = false;

  constructor(readonly conn: Deno.TcpConn) {
    conn.setNoDelay(true);
  }

  /** Queues a request's bytes; they go out with the others of this tick in one write. */
  queue(bytes: Uint8Array, due: number): void {
    this.due.push(due);
    this.#pending.push(bytes);
  }

  /** Writes what is queued (one write at a time; more queued meanwhile follows in the next). */
  async flush(): Promise<void> {
    if (this.#writing || this.#pending.length === 0 || this.closed) return;
    this.#writing = true;
    try {
      while (this.#pending.length > 0) {
        const parts = this.#pending;
        this.#pending = [];
        const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
        let offset = 0;
        for (const p of parts) {
          out.set(p, offset);
          offset += p.length;
        }
        for (let written = 0; written < out.length;) written += await this.conn.write(out.subarray(written));
      }
    } catch {
      this.closed = true;
    } finally {
      this.#writing = false;
    }
  }
}

/** Runs a plan: sends on schedule, reports ticks through `onTick`, answers the result. */
export async function runOpenLoop(
  plan: GeneratorPlan,
  onTick: (tick: GeneratorTick) => void = () => {},
): Promise<GeneratorResult> {
  const target = new URL(plan.url);
  const encoder = new TextEncoder();
  let headPrefix = `${plan.method} ${plan.path} HTTP/1.1\r\nhost: ${target.host}\r\n`;
  for (const [k, v] of Object.entries(plan.headers)) headPrefix += `${k}: ${v}\r\n`;
  headPrefix += "content-type: application/json\r\n";
  const head = (length: number) => `${headPrefix}content-length: ${length}\r\n\r\n`;
  const [beforeSeq, afterSeq] = plan.bodyTemplate.split("%SEQ%");
  if (afterSeq === undefined) throw new Error("the body template has no %SEQ%");
  const conns = await Promise.all(
    Array.from({ length: plan.connections }, async () =>
      new Connection(
        await Deno.connect({ hostname: target.hostname, port: Number(target.port) }),
      )),
  );
  let latencies = new Float64Array(1 << 16);
  let answered = 0;
  let ok = 0;
  let lastAnswerAt = 0;
  const statuses: Record<string, number> = {};
  const readers = conns.map(async (c) => {
    const parser = new ResponseParser();
    try {
      for await (const chunk of c.conn.readable) {
        const now = epochMs();
        parser.push(chunk, (status) => {
          const due = c.due.shift()!;
          if (answered === latencies.length) {
            const grown = new Float64Array(latencies.length * 2);
            grown.set(latencies);
            latencies = grown;
          }
          latencies[answered++] = now - due;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (status >= 200 && status < 300) ok++;
          lastAnswerAt = now;
        });
      }
    } catch { /* connection reset: its requests count as unanswered */ }
    c.closed = true;
  });

  const total = Math.round(plan.rate * plan.durationSec);
  const firstSeq = plan.firstSeq ?? 0;
  // The schedule starts a little ahead, so that the first due time is not already past.
  const start = epochMs() + 20;
  const cpuAtStart = ownCpuSeconds();
  let sent = 0;
  let maxLagMs = 0;
  /** Connections with requests queued since the last flush. */
  const dirty = new Set<Connection>();
  let nextTick = start + TICK_MS;
  while (sent < total) {
    const now = epochMs();
    const due = Math.min(total, Math.floor(((now - start) * plan.rate) / 1000) + 1);
    if (due > sent) maxLagMs = Math.max(maxLagMs, now - dueAt(start, plan.rate, sent));
    for (; sent < due; sent++) {
      const at = dueAt(start, plan.rate, sent);
      const body = encoder.encode(
        `${beforeSeq}${String(firstSeq + sent).padStart(7, "0")}${afterSeq}`.replaceAll("%AT%", at.toFixed(1)),
      );
      const headBytes = encoder.encode(head(body.length));
      const bytes = new Uint8Array(headBytes.length + body.length);
      bytes.set(headBytes);
      bytes.set(body, headBytes.length);
      const c = conns[sent % conns.length];
      c.queue(bytes, at);
      dirty.add(c);
    }
    for (const c of dirty) c.flush();
    dirty.clear();
    if (now >= nextTick) {
      onTick({ type: "tick", at: now, sent, ok });
      nextTick += TICK_MS;
    }
    // Sleep to the next due time, a millisecond at least: the requests due meanwhile go out together
    // (a loop per request at 12,000/s would cost the generator more than the requests do).
    const wait = dueAt(start, plan.rate, sent) - epochMs();
    await new Promise((r) => setTimeout(r, Math.max(1, Math.min(wait, TICK_MS))));
  }
  const graceEnd = epochMs() + (plan.graceSec ?? 30) * 1000;
  while (answered < sent && epochMs() < graceEnd && conns.some((c) => !c.closed)) {
    await new Promise((r) => setTimeout(r, 20));
    if (epochMs() >= nextTick) {
      onTick({ type: "tick", at: epochMs(), sent, ok });
      nextTick += TICK_MS;
    }
  }
  onTick({ type: "tick", at: epochMs(), sent, ok });
  for (const c of conns) {
    try {
      c.conn.close();
    } catch { /* already closed */ }
  }
  await Promise.all(readers);
  const sorted = latencies.subarray(0, answered).sort();
  return {
    type: "done",
    startedAt: start,
    sent,
    ok,
    statuses,
    unanswered: sent - answered,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: sorted.length > 0 ? sorted[sorted.length - 1] : NaN,
    lastAnswerAt,
    cpuSeconds: ownCpuSeconds() - cpuAtStart,
    maxLagMs,
  };
}

if (import.meta.main) {
  const plan = JSON.parse(Deno.args[0]) as GeneratorPlan;
  const write = (line: unknown) => console.log(JSON.stringify(line));
  write(await runOpenLoop(plan, write));
}
