import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";

/** Contacts endpoints under /api/v1/contacts. */
export function contactsRoutes(_deps: Deps) {
  const app = newRouter();
  return app;
}
