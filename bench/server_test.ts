import assert from "node:assert/strict";
import { cpuSeconds, mainThreadCpuSeconds, startTaskV8Flags, statCpuSeconds } from "./server.ts";

Deno.test("startTaskV8Flags() reads the V8 flags of deno.json's start task", async () => {
  const root = await Deno.makeTempDir();
  const write = (config: unknown) => Deno.writeTextFile(`${root}/deno.json`, JSON.stringify(config));
  await write({ tasks: { start: "deno run -A --v8-flags=--a=1,--b main.ts", test: "deno test --v8-flags=--c" } });
  assert.deepEqual(await startTaskV8Flags(`${root}/`), ["--v8-flags=--a=1,--b"]);
  await write({ tasks: { start: "deno run -A main.ts" } });
  assert.deepEqual(await startTaskV8Flags(`${root}/`), []);
  await write({});
  assert.deepEqual(await startTaskV8Flags(`${root}/`), []);
  await Deno.remove(root, { recursive: true });
});

Deno.test("statCpuSeconds reads utime and stime (and the children's) after a command name with spaces", () => {
  const stat = "4242 (deno (main)) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 7 3 20 0 4 0 100 0 0";
  assert.equal(statCpuSeconds(stat), 3);
  assert.equal(statCpuSeconds(stat, true), 3.1);
  assert.equal(statCpuSeconds(undefined), 0);
});

Deno.test("mainThreadCpuSeconds reads the main thread of a Deno process, whose time grows while it spins", async () => {
  // A child, because `deno test` runs tests off the process's main thread.
  const child = new Deno.Command(Deno.execPath(), { args: ["eval", "while (true) {}"], stdout: "null", stderr: "null" })
    .spawn();
  try {
    const first = await mainThreadCpuSeconds(child.pid);
    // Until its CPU time moves two ticks on (at most 10 s of wall time).
    const deadline = performance.now() + 10_000;
    let now = first;
    while (now < first + 0.02 && performance.now() < deadline) now = await mainThreadCpuSeconds(child.pid);
    assert.ok(now >= first + 0.02, `${first} → ${now}`);
    // A thread's time is at most its process's, read later; each is rounded down to ticks on its own
    // (user and system apart), so the process's may show up to two ticks less.
    const total = await cpuSeconds(child.pid);
    assert.ok(now <= total + 0.02, `thread ${now} > process ${total}`);
  } finally {
    child.kill();
    await child.status;
  }
});
