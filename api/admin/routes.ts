import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";

/** The admin API under /admin/v1, behind the admin token. */
export function adminRoutes(_deps: Deps) {
  const app = newRouter();
  return app;
}
