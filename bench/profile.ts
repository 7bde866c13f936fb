/**
 * CPU profiles of the service while a scenario runs (`deno task bench --profile`): the service is
 * started with `--inspect`, and the V8 sampling profiler is driven over the DevTools protocol.
 * Each profile is saved as .cpuprofile (open it in Chrome DevTools) and summarised on stderr.
 */

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
/** A V8 CPU profile as the DevTools protocol returns it. */
export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** A DevTools protocol session with one isolate. */
export class Inspector {
  #ws: WebSocket;
  #id = 0;
  #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(ws: WebSocket) {
    this.#ws = ws;
    ws.onmessage = (e) => {
      const msg = JSON.parse(e.data);
      const waiter = msg.id === undefined ? undefined : this.#pending.get(msg.id);
      if (!waiter) return;
      this.#pending.delete(msg.id);
      if (msg.error) waiter.reject(new Error(`${msg.error.message}`));
      else waiter.resolve(msg.result);
    };
  }

  /** Connects to the first target of the inspector listening on `port`. */
  static async connect(port: number): Promise<Inspector> {
    const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
    const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new Error("cannot reach the service's inspector"));
    });
    const inspector = new Inspector(ws);
    await inspector.send("Profiler.enable");
    await inspector.send("Profiler.setSamplingInterval", { interval: 200 });
    return inspector;
  }

  /** Sends one command and waits for its result. */
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T> {
    const id = ++this.#id;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#ws.send(JSON.stringify({ id, method, params }));
    });
  }

  /** Profiles the isolate while `work` runs. */
  async profile(work: () => Promise<void>): Promise<CpuProfile> {
    await this.send("Profiler.start");
    let failure: unknown;
    await work().catch((err) => (failure = err));
    const { profile } = await this.send<{ profile: CpuProfile }>("Profiler.stop");
    if (failure) throw failure;
    return profile;
  }

  /** Closes the session. */
  close(): void {
    this.#ws.close();
  }
}

/** Where a frame's code comes from, to see which layer the time goes to. */
function area(frame: CallFrame): string {
  const url = frame.url;
  if (!url) return frame.functionName ? `(native) ${frame.functionName}` : "(runtime)";
  const npm = /\/npm\/registry\.npmjs\.org\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (npm) return `npm:${npm[1]}`;
  if (url.startsWith("ext:")) return url.replace(/^ext:([^/]+).*/, "deno:$1");
  const local = /\/work\/[^/]+\/(.*)$/.exec(url) ?? /file:\/\/\/(.*)$/.exec(url);
  return local ? local[1] : url;
}

/**
 * Self time by layer (npm package, Deno extension, our file) and by function, in percent of the
 * sampled time and, given the number of requests served meanwhile, in µs per request.
 */
export function summarise(profile: CpuProfile, requests?: number, top = 20): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0) || 1;
  const byArea = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, micros] of self) {
    const frame = byId.get(id)!.callFrame;
    const a = area(frame);
    byArea.set(a, (byArea.get(a) ?? 0) + micros);
    const fn = `${frame.functionName || "(anonymous)"} ${a}${frame.url ? `:${frame.lineNumber + 1}` : ""}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + micros);
  }
  // Inclusive time of the project's own functions: a sample counts for every one of them on its stack.
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const ours = new Map<string, number>();
  for (const [id, micros] of self) {
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      const a = area(frame);
      if (!frame.url || a.startsWith("npm:") || a.startsWith("deno:") || a.startsWith("(")) continue;
      const fn = `${frame.functionName || "(anonymous)"} ${a}:${frame.lineNumber + 1}`;
      if (!seen.has(fn)) ours.set(fn, (ours.get(fn) ?? 0) + micros);
      seen.add(fn);
    }
  }
  const list = (m: Map<string, number>) =>
    [...m].sort((a, b) => b[1] - a[1]).slice(0, top).map(([k, v]) =>
      `  ${(v / total * 100).toFixed(1).padStart(5)} %${
        requests ? ` ${(v / requests).toFixed(1).padStart(7)} µs/req` : ""
      }  ${k}`
    );
  return [
    `self time by layer (${(total / 1e6).toFixed(1)} s sampled):`,
    ...list(byArea),
    "self time by function:",
    ...list(byFunction),
    "inclusive time of the project's functions (synchronous parts only):",
    ...list(ours),
  ].join("\n");
}
