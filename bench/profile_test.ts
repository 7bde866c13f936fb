import assert from "node:assert/strict";
import { type CpuProfile, summarise } from "./profile.ts";

Deno.test("summarise splits self time by layer and by function", () => {
  const frame = (functionName: string, url: string, lineNumber = 0) => ({ functionName, url, lineNumber });
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: frame("(root)", "") },
      { id: 2, callFrame: frame("json", "file:///root/.cache/deno/npm/registry.npmjs.org/hono/4.13.19/dist/x.js", 9) },
      { id: 3, callFrame: frame("limitRate", "file:///work/main/shared/http/rate_limit.ts", 29) },
      { id: 4, callFrame: frame("(idle)", "") },
    ],
    startTime: 0,
    endTime: 1000,
    samples: [2, 2, 3, 4],
    timeDeltas: [100, 500, 300, 100],
  };
  const text = summarise(profile);
  assert.match(text, /60\.0 % {2}npm:hono\n/);
  assert.match(text, /30\.0 % {2}shared\/http\/rate_limit\.ts\n/);
  assert.match(text, /60\.0 % {2}json npm:hono:10/);
  assert.match(text, /10\.0 % {2}\(idle\) \(native\) \(idle\)/);
});
