import { TrieRouter } from "hono/router/trie-router";

/** What is read of an app: its routes (a Hono app's `routes`). */
interface Routed {
  routes: { method: string; path: string }[];
}

/** The methods a route can be declared with, in the order an `Allow` header lists them. */
const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"] as const;

/** A router of the app's routes by method (middleware left out), and how many routes it was built from. */
const routers = new WeakMap<Routed, { size: number; router: TrieRouter<string> }>();

/**
 * The methods some route of `app` answers on `path` (HEAD wherever GET is: Hono answers it with the
 * GET route); empty when no route has that path. What a 405's `Allow` header lists.
 */
export function allowedMethods(app: Routed, path: string): string[] {
  const router = routerOf(app);
  return METHODS.filter((method) => router.match(method === "HEAD" ? "GET" : method, path)[0].length > 0);
}

function routerOf(app: Routed): TrieRouter<string> {
  const built = routers.get(app);
  // Routes are all added before the first request; rebuilt should one be added later.
  if (built?.size === app.routes.length) return built.router;
  const router = new TrieRouter<string>();
  for (const route of app.routes) {
    if (route.method === "ALL" || route.path.endsWith("*")) continue;
    router.add(route.method, route.path, route.method);
  }
  routers.set(app, { size: app.routes.length, router });
  return router;
}
