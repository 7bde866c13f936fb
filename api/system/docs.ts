import { Scalar } from "@scalar/hono-api-reference";
import { Hono, type MiddlewareHandler } from "hono";
import type { AppEnv } from "../../shared/http/env.ts";

/** Where the page finds the reference script (served below, never from a CDN). */
const SCRIPT_PATH = "/docs/scalar.js";

/**
 * The standalone browser bundle of `@scalar/api-reference`, read from the npm package that deno.lock
 * pins. The package's exports do not name the file, so it is found beside the package's entry module:
 * `import.meta.resolve` answers that module's place in the dependency cache (or node_modules), which
 * `deno install` filled, in the container image too.
 */
export async function scalarBundle(): Promise<{ body: Uint8Array; version: string }> {
  const entry = import.meta.resolve("@scalar/api-reference");
  const [body, pkg] = await Promise.all([
    Deno.readFile(new URL("./browser/standalone.js", entry)),
    Deno.readTextFile(new URL("../package.json", entry)),
  ]);
  return { body, version: (JSON.parse(pkg) as { version: string }).version };
}

/**
 * `GET /docs`, the interactive reference of the OpenAPI document, and `GET /docs/scalar.js`, its script.
 * Every asset comes from this service: the page works with no internet and behind strict networks.
 */
export function docsRoutes(documentUrl: string) {
  const app = new Hono<AppEnv>();
  let bundle: ReturnType<typeof scalarBundle> | undefined;
  const loaded = () => bundle ??= scalarBundle();
  app.get(SCRIPT_PATH, async (c) => {
    const { body, version } = await loaded();
    // The page asks for the script with the package version in its query: a new version is a new URL.
    const etag = `"scalar-${version}"`;
    c.header("Cache-Control", "public, max-age=31536000, immutable");
    c.header("ETag", etag);
    if (c.req.header("if-none-match") === etag) return c.body(null, 304);
    return c.body(body as Uint8Array<ArrayBuffer>, 200, { "Content-Type": "text/javascript; charset=utf-8" });
  });
  let page: MiddlewareHandler<AppEnv> | undefined;
  app.get("/docs", async (c, next) => {
    page ??= referencePage(documentUrl, (await loaded()).version);
    return await page(c, next);
  });
  return app;
}

/** The reference page's handler: Scalar's page, loading the script above and nothing from elsewhere. */
function referencePage(documentUrl: string, version: string): MiddlewareHandler<AppEnv> {
  return Scalar<AppEnv>({
    url: documentUrl,
    pageTitle: "Messaging API reference",
    cdn: `${SCRIPT_PATH}?v=${version}`,
    defaultOpenAllTags: true,
    // Each of these would reach another host: fonts from Scalar's font server, usage telemetry, the
    // hosted AI agent and MCP generator, the deploy and share tools.
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: "never",
  });
}
