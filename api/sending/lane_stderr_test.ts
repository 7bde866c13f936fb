import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, testDeps, testTeam } from "../../shared/testing.ts";
import { SendLane } from "./send_lane.ts";

// A file of its own: Deno.serve prints its warning once per process, so an earlier test could hide it.
dbTest("a send the lane hands to the app (a bad body, over HTTP) prints nothing outside the JSON log", async () => {
  const deps = await testDeps();
  const { keys } = await testTeam(deps);
  const printed: string[] = [];
  const warn = console.warn;
  console.warn = (...args: unknown[]) => printed.push(args.map(String).join(" "));
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    new SendLane(createService(deps), deps).fetch,
  );
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/api/v1/sms/send`, {
      method: "POST",
      headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
      body: JSON.stringify({ recipient_type: "bogus" }),
    });
    assert.equal(res.status, 400);
    await res.body?.cancel();
  } finally {
    console.warn = warn;
    await server.shutdown();
  }
  assert.deepEqual(printed, []);
});
