/** The service under test as a child process (`deno run -A main.ts`), started, killed and restarted on one data set. */
import postgres from "postgres";

const ROOT = new URL("../../", import.meta.url);

/** A fresh database named `<prefix>_…` on the server of `url` (dropped by the returned function). */
export async function freshDatabase(
  prefix: string,
  url: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  await admin`create database ${admin(name)}`;
  const target = new URL(url);
  target.pathname = `/${name}`;
  return {
    url: target.toString(),
    drop: async () => {
      await admin`drop database if exists ${admin(name)} with (force)`;
      await admin.end();
    },
  };
}

/** A free loopback port (the OS picks one; it is released before the service binds it). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** One run of the service: its process and where its output goes. */
export class ServiceProcess {
  readonly baseUrl: string;
  #env: Record<string, string>;
  #logPath: string;
  #child: Deno.ChildProcess | undefined;
  /** The exit status of the running child, once it has exited on its own. */
  #exited: Deno.CommandStatus | undefined;
  #copying: Promise<void>[] = [];

  constructor(env: Record<string, string>, logPath: string) {
    this.#env = env;
    this.#logPath = logPath;
    this.baseUrl = `http://${env.HOST}:${env.PORT}`;
  }

  /** Starts the service (appending its output to the log file). */
  async start(): Promise<void> {
    if (this.#child) throw new Error("Cannot start the service: it is already running");
    const file = await Deno.open(this.#logPath, { create: true, append: true });
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "main.ts"],
      cwd: ROOT,
      env: this.#env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#child = child;
    this.#exited = undefined;
    child.status.then((status) => {
      if (this.#child === child) this.#exited = status;
    });
    // Both streams into one file: the pipes are drained so that the child never blocks on them.
    const writer = file.writable.getWriter();
    const pump = async (stream: ReadableStream<Uint8Array>) => {
      for await (const chunk of stream) await writer.write(chunk);
    };
    const done = Promise.allSettled([pump(child.stdout), pump(child.stderr)]).then(() =>
      writer.close().catch(() => {})
    );
    this.#copying.push(done.then(() => {}));
  }

  /** Waits until GET /healthz answers 200; answers the time it took from `since`. */
  async waitHealthy(since: number, timeoutMs = 60_000): Promise<number> {
    const took = await this.#waitForHealth(200, since, timeoutMs, 2_000);
    if (took === undefined) {
      throw new Error(`Cannot reach ${this.baseUrl}/healthz within ${timeoutMs} ms (see ${this.#logPath})`);
    }
    return took;
  }

  /**
   * Waits until GET /healthz answers 503 (the service's database away); answers the time it took from
   * `since`. The check itself may take up to 5 s then (its own limit), so each request gets longer.
   */
  async waitUnavailable(since: number, timeoutMs = 30_000): Promise<number> {
    const took = await this.#waitForHealth(503, since, timeoutMs, 8_000);
    if (took === undefined) {
      throw new Error(`${this.baseUrl}/healthz did not answer 503 within ${timeoutMs} ms of the database going away`);
    }
    return took;
  }

  /** Polls GET /healthz until it answers `status`: the time from `since`, or undefined after `timeoutMs`. */
  async #waitForHealth(
    status: number,
    since: number,
    timeoutMs: number,
    requestTimeoutMs: number,
  ): Promise<number | undefined> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (this.#child === undefined) throw new Error("Cannot wait for the service: it is not running");
      if (this.#exited) {
        throw new Error(`The service exited with code ${this.#exited.code} (see ${this.#logPath})`);
      }
      try {
        const res = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(requestTimeoutMs) });
        await res.body?.cancel();
        if (res.status === status) return Date.now() - since;
      } catch {
        // Not listening yet, or no answer in time.
      }
      await delay(50);
    }
    return undefined;
  }

  /** SIGKILL: no shutdown handler runs, in-flight work is cut off wherever it is. */
  async kill(): Promise<void> {
    const child = this.#take();
    try {
      child.kill("SIGKILL");
    } catch {
      // It has exited already.
    }
    await child.status;
    await Promise.all(this.#copying.splice(0));
  }

  /** SIGTERM (graceful shutdown) and wait for the exit; SIGKILL after `timeoutMs`. */
  async stop(timeoutMs = 20_000): Promise<Deno.CommandStatus> {
    const child = this.#take();
    try {
      child.kill("SIGTERM");
    } catch {
      // It has exited already: its status says how.
    }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    const status = await child.status;
    clearTimeout(timer);
    await Promise.all(this.#copying.splice(0));
    return status;
  }

  /** True while a child is started and not yet killed or stopped. */
  get running(): boolean {
    return this.#child !== undefined;
  }

  /** The lines of the service's output (JSON log lines) whose `msg` is `message`. */
  async logged(message: string): Promise<Record<string, unknown>[]> {
    const text = await Deno.readTextFile(this.#logPath).catch(() => "");
    return text.split("\n").flatMap((line) => {
      try {
        const entry = JSON.parse(line);
        return entry?.msg === message ? [entry] : [];
      } catch {
        return [];
      }
    });
  }

  /** The last lines of the service's output, for a failure report. */
  async tail(lines = 40): Promise<string> {
    try {
      const text = await Deno.readTextFile(this.#logPath);
      return text.trimEnd().split("\n").slice(-lines).join("\n");
    } catch {
      return "(no output)";
    }
  }

  #take(): Deno.ChildProcess {
    const child = this.#child;
    if (!child) throw new Error("Cannot signal the service: it is not running");
    this.#child = undefined;
    return child;
  }
}

/** A promise that resolves after `ms`. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
