import puppeteer, { type Browser } from "puppeteer-core";

/** Debian's `chromium` package (.ci/run installs it when missing). */
const CHROMIUM = "/usr/bin/chromium";

const hasChromium = await Deno.stat(CHROMIUM).then((s) => s.isFile, () => false);

/**
 * A test in headless Chromium: `fn` gets the browser, which is closed after it. Without a browser the test
 * is skipped with a warning, except in CI, where it fails: a browser test that never runs proves nothing.
 */
export function browserTest(name: string, fn: (browser: Browser) => Promise<void>): void {
  const skip = !hasChromium && Deno.env.get("CI") !== "true";
  if (skip) console.warn(`skipping "${name}": no ${CHROMIUM} (apt-get install -y chromium)`);
  Deno.test({
    name,
    ignore: skip,
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      if (!hasChromium) throw new Error(`CI needs ${CHROMIUM} (.ci/run installs it)`);
      const browser = await puppeteer.launch({
        executablePath: CHROMIUM,
        headless: true,
        args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
      });
      try {
        await fn(browser);
      } finally {
        await browser.close();
      }
    },
  });
}

/** Serves `handler` on a loopback port for a browser to reach: its origin, and how to stop it. */
export function serveOnLoopback(handler: Deno.ServeHandler): { origin: string; shutdown(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
  return { origin: `http://127.0.0.1:${server.addr.port}`, shutdown: () => server.shutdown() };
}
