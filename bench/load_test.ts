import assert from "node:assert/strict";
import { type LoadGenerator, type LoadOptions, type LoadResult, runLoad } from "./load.ts";
import { prepareWrk, wrkInstalled } from "./wrk.ts";

/** Each test runs on both generators; on wrk only where it is installed (`apt-get install wrk`). */
const GENERATORS: { generator: LoadGenerator; ignore: boolean }[] = [
  { generator: "autocannon", ignore: false },
  { generator: "wrk", ignore: !wrkInstalled() },
];

function serve(handler: (req: Request) => Response | Promise<Response>) {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return { url: `http://127.0.0.1:${server.addr.port}`, close: () => server.shutdown() };
}

/** One run of `generator` against a server answering with `handler`, closed afterwards. */
async function loadAgainst(
  generator: LoadGenerator,
  handler: (req: Request) => Response | Promise<Response>,
  load: Pick<LoadOptions, "connections" | "durationSec" | "requests">,
): Promise<LoadResult> {
  const server = serve(handler);
  try {
    return await runLoad({ generator, url: server.url, ...load });
  } finally {
    await server.close();
  }
}

for (const { generator, ignore } of GENERATORS) {
  Deno.test(
    { name: `runLoad (${generator}) sends a fresh body per request and counts every answer`, ignore },
    async () => {
      const emails: string[] = [];
      const result = await loadAgainst(generator, async (req) => {
        const body = await req.json();
        emails.push(body.email);
        // A few thousand answers a second, as a service's (wrk writes out 60,000 bodies a second of run).
        await new Promise((resolve) => setTimeout(resolve, 1));
        return Response.json({ ok: true }, { status: 201 });
      }, {
        connections: 4,
        durationSec: 0.5,
        requests: (seq) => ({ method: "POST", path: "/contacts", body: { email: `u${seq}@example.com` } }),
      });
      assert.ok(result.requests > 10, `only ${result.requests} requests`);
      assert.equal(new Set(emails).size, emails.length, "a body was sent twice");
      assert.ok(emails.length >= result.requests);
      assert.equal(result.non2xx, 0);
      assert.equal(result.statuses["201"], result.requests);
      assert.ok(result.p50Ms > 0 && result.p99Ms >= result.p50Ms);
      assert.ok(Math.abs(result.rps - result.requests / result.seconds) < 1e-6);
    },
  );

  Deno.test({ name: `runLoad (${generator}) cycles a fixed list and reports non-2xx answers`, ignore }, async () => {
    const paths = new Set<string>();
    const result = await loadAgainst(generator, (req) => {
      const path = new URL(req.url).pathname;
      paths.add(path);
      return path === "/missing" ? Response.json({ error: "no" }, { status: 404 }) : Response.json({ ok: true });
    }, {
      connections: 2,
      durationSec: 0.3,
      requests: [{ method: "GET", path: "/a" }, { method: "GET", path: "/missing" }],
    });
    assert.deepEqual([...paths].sort(), ["/a", "/missing"]);
    assert.ok(result.non2xx > 0);
    assert.equal(result.non2xx, result.statuses["404"]);
    assert.equal(result.requests, result.statuses["200"] + result.statuses["404"]);
  });
}

Deno.test({ name: "wrk refuses a run that would send a factory's bodies twice", ignore: !wrkInstalled() }, async () => {
  const server = serve(() => Response.json({ ok: true }));
  try {
    const run = await prepareWrk({
      generator: "wrk",
      url: server.url,
      connections: 2,
      durationSec: 1,
      requests: (seq) => ({ method: "POST", path: "/contacts", body: { email: `u${seq}@example.com` } }),
    }, 50);
    await assert.rejects(run(), /wrk sent all 50 requests written for the run/);
  } finally {
    await server.close();
  }
});
