import assert from "node:assert/strict";
import { startTaskV8Flags } from "./server.ts";

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
