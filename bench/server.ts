/** Starting, watching and stopping the server processes the bench measures. */

/** A server process started by the bench. */
export interface ServerProcess {
  name: string;
  pid: number;
  url: string;
  logPath: string;
  /** Peak resident set size so far (VmHWM), in MiB; undefined when /proc cannot tell. */
  peakRssMiB(): Promise<number | undefined>;
  /** SIGTERM (SIGKILL after 5 s), or SIGKILL at once with `kill`. */
  stop(options?: { kill?: boolean }): Promise<void>;
}

interface StartOptions {
  name: string;
  /** Arguments after `deno`. */
  args: string[];
  env: Record<string, string>;
  /** Path answered with 2xx once the server is ready; none for a process that serves no HTTP. */
  readyPath?: string;
  /** Folder for the process log. */
  logDir: string;
  timeoutMs?: number;
}

const running = new Set<ServerProcess>();

/** Stops every server still running (on exit or interrupt). */
/**
 * Stops every server started here. `kill`: at once (SIGKILL), for the end of a run, when a
 * graceful shutdown would only finish delivering a backlog nobody measures (up to 5 s).
 */
export async function stopAll(options: { kill?: boolean } = {}): Promise<void> {
  await Promise.all([...running].map((s) => s.stop(options)));
}

/**
 * The V8 flags of `deno task start` (deno.json), so that the bench runs the service as its users do
 * (its heap setting changes the service's peak RSS by a third; see docs/deployment.md, "Memory").
 */
export async function startTaskV8Flags(root: string): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${root}deno.json`));
  return String(config.tasks?.start ?? "").split(/\s+/).filter((word) => word.startsWith("--v8-flags="));
}

/** Asks the kernel for a free loopback port. */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Reads a memory line (VmHWM, VmRSS …) of a process's /proc status, in MiB. */
async function statusMiB(pid: number, field: string): Promise<number | undefined> {
  try {
    const status = await Deno.readTextFile(`/proc/${pid}/status`);
    const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status);
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Reads VmHWM (peak RSS) of a process from /proc, in MiB. */
export function peakRssMiB(pid: number): Promise<number | undefined> {
  return statusMiB(pid, "VmHWM");
}

/** Reads VmRSS (resident set size now) of a process from /proc, in MiB. */
export function rssMiB(pid: number): Promise<number | undefined> {
  return statusMiB(pid, "VmRSS");
}

/**
 * Resets a process's peak RSS (VmHWM) to its current RSS (Linux: `5` to /proc/<pid>/clear_refs), so
 * that a later reading is the peak of what happened in between; false when the kernel refuses.
 */
export async function resetPeakRss(pid: number): Promise<boolean> {
  try {
    await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ: 100 on Linux). */
const CLK_TCK = 100;

/** User plus system CPU seconds a process has used (all its threads), from /proc; 0 when unknown. */
export async function cpuSeconds(pid: number, children = false): Promise<number> {
  return statCpuSeconds(await readStat(`/proc/${pid}/stat`), children);
}

/**
 * CPU seconds of a process's main thread alone (its thread id is the pid): in Deno, the thread that
 * runs the JavaScript and serves HTTP, the service's bottleneck when it is CPU-bound. 0 when unknown.
 */
export async function mainThreadCpuSeconds(pid: number): Promise<number> {
  return statCpuSeconds(await readStat(`/proc/${pid}/task/${pid}/stat`));
}

async function readStat(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch {
    return undefined;
  }
}

/** User plus system CPU seconds of a /proc `stat` line (process or thread); 0 without one. */
export function statCpuSeconds(stat: string | undefined, children = false): number {
  if (!stat) return 0;
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th,
  // then cutime and cstime (of the children it has waited for).
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const own = Number(fields[11]) + Number(fields[12]);
  return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / CLK_TCK;
}

async function tail(path: string, lines = 30): Promise<string> {
  try {
    return (await Deno.readTextFile(path)).split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** Starts `deno <args>` on loopback and waits until `readyPath` answers 2xx (no wait without one). */
export async function startServer(options: StartOptions): Promise<ServerProcess> {
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const logPath = `${options.logDir}/${options.name}.log`;
  const log = await Deno.open(logPath, { create: true, write: true, truncate: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: options.args,
    env: { ...options.env, PORT: String(port), HOST: "127.0.0.1", NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  // Both streams go to one log file; nothing of the child reaches the bench's own output.
  const writer = log.writable.getWriter();
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) await writer.write(chunk);
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]).finally(() => writer.close().catch(() => {}));
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  let stopping: Promise<void> | undefined;
  const server: ServerProcess = {
    name: options.name,
    pid: child.pid,
    url,
    logPath,
    peakRssMiB: () => peakRssMiB(child.pid),
    stop(options = {}) {
      stopping ??= (async () => {
        running.delete(server);
        if (!exited) {
          try {
            child.kill(options.kill ? "SIGKILL" : "SIGTERM");
          } catch { /* already gone */ }
          const timer = setTimeout(() => {
            try {
              child.kill("SIGKILL");
            } catch { /* already gone */ }
          }, 5000);
          await status;
          clearTimeout(timer);
        }
        await pumps.catch(() => {});
      })();
      return stopping;
    },
  };
  running.add(server);
  if (options.readyPath === undefined) return server;

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  while (true) {
    if (exited) {
      await server.stop();
      throw new Error(`${options.name} exited before it was ready; log ${logPath}:\n${await tail(logPath)}`);
    }
    try {
      const res = await fetch(url + options.readyPath, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.ok) return server;
    } catch { /* not listening yet */ }
    if (Date.now() > deadline) {
      await server.stop();
      throw new Error(
        `${options.name} not ready after ${options.timeoutMs ?? 60_000} ms; log ${logPath}:\n${await tail(logPath)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
