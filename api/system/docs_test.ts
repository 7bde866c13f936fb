import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { dbTest, testDeps } from "../../shared/testing.ts";

dbTest("GET /docs/scalar.js serves the pinned reference bundle with long cache headers", async () => {
  const app = createService(await testDeps());
  const page = await (await app.request("/docs")).text();
  const src = page.match(/<script src="(\/docs\/scalar\.js\?v=[^"]+)"/)?.[1];
  assert.ok(src, "the page loads its script from the service");
  assert.doesNotMatch(page, /https?:\/\//, "the page names no other host");
  const res = await app.request(src);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /javascript/);
  assert.match(res.headers.get("cache-control") ?? "", /max-age=31536000/);
  assert.match(await res.text(), /createApiReference/);
  const again = await app.request(src, { headers: { "If-None-Match": res.headers.get("etag")! } });
  assert.equal(again.status, 304);
});

/** What the test reads of the OpenAPI document: each operation's summary. */
type Document = { paths: Record<string, Record<string, { summary: string }>> };

browserTest(
  "GET /docs renders the operations in Chromium with every request to the service itself",
  async (browser) => {
    const app = createService(await testDeps());
    const doc: Document = await (await app.request("/api/v1/openapi.json")).json();
    const { origin, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      // Wide enough for the sidebar, which lists every operation (a narrow page folds it away).
      await page.setViewport({ width: 1400, height: 900 });
      const requested: string[] = [];
      page.on("request", (req) => requested.push(req.url()));
      await page.goto(`${origin}/docs`, { waitUntil: "networkidle0", timeout: 60_000 });
      const summaries = Object.values(doc.paths)
        .flatMap((item) => Object.values(item).map((op) => op.summary));
      // The page's own code runs in the browser: given as source text (this file is type-checked without the DOM).
      await page.waitForFunction(
        `${JSON.stringify(summaries)}.every((s) => document.body.innerText.includes(s))`,
        { timeout: 60_000 },
      ).catch(() => {});
      const text = await page.evaluate("document.body.innerText") as string;
      const missing = summaries.filter((s) => !text.includes(s));
      assert.deepEqual(missing, [], "every operation is listed on the page");
      const foreign = requested.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith("data:"));
      assert.deepEqual(foreign, [], "the page asks nothing of any other host");
      assert.ok(requested.includes(`${origin}/api/v1/openapi.json`), "the page reads the document");
    } finally {
      await shutdown();
    }
  },
);
