/**
 * A PostgreSQL server of the crash test's own: `initdb` into a temporary folder and `pg_ctl` on a
 * free port, so that the test can stop and start it under a loaded service without failing what
 * anyone else runs on the machine's server. Run as root, the server's programs run as the
 * `postgres` user (PostgreSQL refuses to run as root).
 */
import { freePort } from "./service.ts";

/** The folder of PostgreSQL's programs (`pg_config --bindir`, else the newest /usr/lib/postgresql/<v>/bin). */
async function binDir(): Promise<string | undefined> {
  try {
    const out = await new Deno.Command("pg_config", { args: ["--bindir"], stderr: "null" }).output();
    const dir = new TextDecoder().decode(out.stdout).trim();
    if (out.success && await exists(`${dir}/initdb`)) return dir;
  } catch {
    // No pg_config on the PATH.
  }
  const versions: number[] = [];
  try {
    for await (const entry of Deno.readDir("/usr/lib/postgresql")) {
      if (await exists(`/usr/lib/postgresql/${entry.name}/bin/initdb`)) versions.push(Number(entry.name));
    }
  } catch {
    return undefined;
  }
  versions.sort((a, b) => b - a);
  return versions.length ? `/usr/lib/postgresql/${versions[0]}/bin` : undefined;
}

async function exists(path: string): Promise<boolean> {
  return await Deno.stat(path).then(() => true, () => false);
}

export class PrivatePostgres {
  readonly url: string;
  readonly #bin: string;
  readonly #dir: string;
  readonly #port: number;
  readonly #asPostgres: boolean;

  private constructor(bin: string, dir: string, port: number, asPostgres: boolean) {
    this.#bin = bin;
    this.#dir = dir;
    this.#port = port;
    this.#asPostgres = asPostgres;
    this.url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  /** A new server in `parent`/pg-private, started; undefined (with the reason) when PostgreSQL is not installed. */
  static async create(parent: string): Promise<PrivatePostgres | string> {
    const bin = await binDir();
    if (!bin) return "no PostgreSQL programs (initdb) on this machine";
    const dir = `${parent}/pg-private`;
    await Deno.mkdir(dir, { recursive: true });
    const asPostgres = Deno.uid() === 0;
    if (asPostgres) await run("chown", ["postgres", parent, dir]);
    const server = new PrivatePostgres(bin, dir, freePort(), asPostgres);
    await server.#ctl("initdb", ["-D", `${dir}/data`, "-A", "trust", "-U", "postgres", "--no-sync"]);
    await server.start();
    return server;
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    const options =
      `-p ${this.#port} -c listen_addresses=127.0.0.1 -k ${this.#dir} -c fsync=off -c max_connections=200`;
    await this.#ctl("pg_ctl", [
      "-D",
      `${this.#dir}/data`,
      "-o",
      options,
      "-l",
      `${this.#dir}/server.log`,
      "-w",
      "start",
    ]);
  }

  /** Stops the server at once (`immediate`: connections cut, no checkpoint; it recovers at the next start). */
  async stop(): Promise<void> {
    await this.#ctl("pg_ctl", ["-D", `${this.#dir}/data`, "-m", "immediate", "-w", "stop"]);
  }

  /** Stops the server (if running) and removes its data. */
  async remove(): Promise<void> {
    await this.#ctl("pg_ctl", ["-D", `${this.#dir}/data`, "-m", "immediate", "-w", "stop"]).catch(() => {});
    await Deno.remove(this.#dir, { recursive: true });
  }

  async #ctl(program: string, args: string[]): Promise<void> {
    const path = `${this.#bin}/${program}`;
    if (this.#asPostgres) await run("runuser", ["-u", "postgres", "--", path, ...args]);
    else await run(path, args);
  }
}

async function run(command: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) || new TextDecoder().decode(out.stdout);
    throw new Error(`${command} ${args.join(" ")} failed: ${text.trim().slice(-500)}`);
  }
}
