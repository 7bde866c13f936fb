import assert from "node:assert/strict";
import { freePort } from "../harness/crash/service.ts";
import { assignedNames, tourBlocks } from "./tour.ts";

const README = new URL("../README.md", import.meta.url);

/** How long a fresh start may take (the embedded Postgres's first start makes its database). */
const STARTUP_MS = 120_000;

/** How long a block that only reads may be tried again while the worker catches up (a reader would wait too). */
const READ_PATIENCE_MS = 20_000;

Deno.test("tourBlocks() reads the tour's sh blocks, their promised answers and whether they write", () => {
  const markdown = [
    "# Title",
    "```sh",
    "echo not in the tour",
    "```",
    "## Tour",
    "```sh",
    "export API=http://x KEY=k",
    "```",
    "```sh",
    "curl -s $API/contacts -d '{}'",
    '# → "id":',
    '# → "email":"a@b.c"',
    "```",
    "```sh",
    "curl -s $API/triggers/$T",
    '# → "status":"completed"',
    "```",
    "## Next",
    "```sh",
    "echo after the tour",
    "```",
  ].join("\n");
  const blocks = tourBlocks(markdown);
  assert.deepEqual(blocks.map((b) => b.expected), [[], ['"id":', '"email":"a@b.c"'], ['"status":"completed"']]);
  assert.deepEqual(blocks.map((b) => b.writes), [false, true, false]);
  assert.deepEqual(assignedNames(blocks[0].script), ["API", "KEY"]);
  assert.deepEqual(assignedNames('T=$(echo "$E" | sed -E s/x/y/)\n# X=not code\nexport A=1 B=2'), ["T", "A", "B"]);
});

Deno.test("the README's tour runs against a freshly started service and answers as the README says", async () => {
  const blocks = tourBlocks(await Deno.readTextFile(README));
  assert.ok(blocks.length >= 8, `the tour has ${blocks.length} blocks`);
  const dir = await Deno.makeTempDir({ prefix: "tour_" });
  const service = startService(dir);
  try {
    const printed = await service.exportLine();
    // The first block shows the line with placeholders: it must name what the service prints.
    assert.deepEqual(assignedNames(blocks[0].script), assignedNames(printed));
    await service.healthy();
    const state = `${dir}/tour.env`;
    await Deno.writeTextFile(state, "");
    const names: string[] = [];
    for (const [i, block] of blocks.entries()) {
      const script = i === 0 ? printed : block.script;
      names.push(...assignedNames(script).filter((n) => !names.includes(n)));
      if (i > 0) assert.ok(block.expected.length > 0, `tour block ${i + 1} promises no answer (# → …):\n${script}`);
      await runUntilAnswered(script, block.expected, { state, names, retry: !block.writes, label: `${i + 1}` });
    }
  } catch (error) {
    throw new Error(`${error instanceof Error ? error.message : error}\n--- service output\n${service.output()}`);
  } finally {
    await service.stop();
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * `deno run -A main.ts` as a fresh clone's `deno task start` runs it: the embedded Postgres in a new folder
 * (never the suite's DATABASE_URL, whose teams would keep the demo team from being made), on a free port.
 * Its output is read as it comes, so that the first start's notice can be taken from it.
 */
function startService(dir: string) {
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts"],
    cwd: new URL("..", import.meta.url),
    env: {
      HOST: "127.0.0.1",
      PORT: String(port),
      DATABASE_URL: "",
      // The README's first command: the embedded defaults, whatever engine the suite runs on.
      ENGINE: "kv",
      PGLITE_DIR: `${dir}/pg`,
      KV_PATH: `${dir}/kv.sqlite3`,
      ADMIN_TOKEN: "",
      DEMO_SEED: "1",
      LOG_LEVEL: "warn",
    },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let output = "";
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) output += text;
  };
  const pumps = Promise.all([pump(child.stdout), pump(child.stderr)]);
  let exited = false;
  const status = child.status.finally(() => exited = true);
  const until = async <T>(what: string, found: () => Promise<T | undefined>): Promise<T> => {
    const deadline = Date.now() + STARTUP_MS;
    while (Date.now() < deadline && !exited) {
      const value = await found();
      if (value !== undefined) return value;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`The service ${exited ? "exited" : `did not start within ${STARTUP_MS} ms`} before ${what}`);
  };
  return {
    output: () => output,
    /** The `export …` line that the first start's notice carries as its `shell` field. */
    exportLine: () => until("it printed the demo team's notice", () => Promise.resolve(shellOfNotice(output))),
    /** Resolves once GET /healthz answers 200. */
    healthy: () =>
      until("it was healthy", async () => {
        const res = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
        await res?.body?.cancel();
        return res?.status === 200 ? true : undefined;
      }),
    /** SIGTERM, then waits for the exit and the last output. */
    stop: async () => {
      if (!exited) child.kill("SIGTERM");
      await status;
      await pumps;
    },
  };
}

/**
 * Runs one block with bash, in the shell state the blocks before it left, and asserts that it succeeds
 * and prints every expected fragment; a block that only reads is tried again until it does.
 */
async function runUntilAnswered(
  script: string,
  expected: string[],
  options: { state: string; names: string[]; retry: boolean; label: string },
): Promise<void> {
  const deadline = Date.now() + (options.retry ? READ_PATIENCE_MS : 0);
  while (true) {
    const { code, output } = await runBlock(script, options.state, options.names);
    const missing = expected.filter((fragment) => !output.includes(fragment));
    if (code === 0 && missing.length === 0) return;
    if (Date.now() >= deadline) {
      assert.fail(
        `tour block ${options.label} ${code === 0 ? `lacks ${JSON.stringify(missing)}` : `exited ${code}`}\n` +
          `--- block\n${script}\n--- output\n${output}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** One bash run of `script` after sourcing `state`; the variables in `names` are saved back to `state`. */
async function runBlock(script: string, state: string, names: string[]): Promise<{ code: number; output: string }> {
  const wrapped = [
    "set -eo pipefail",
    `source ${state}`,
    script,
    `declare -p ${names.join(" ")} > ${state}`,
  ].join("\n");
  const out = await new Deno.Command("bash", { args: ["-c", wrapped], stdout: "piped", stderr: "piped" }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: out.code, output: decode(out.stdout) + decode(out.stderr) };
}

/** The `shell` field of the first complete JSON line that has one (the demo team's notice). */
function shellOfNotice(output: string): string | undefined {
  for (const line of output.split("\n").slice(0, -1)) {
    if (!line.startsWith("{")) continue;
    const shell = (JSON.parse(line) as { shell?: unknown }).shell;
    if (typeof shell === "string") return shell;
  }
  return undefined;
}
