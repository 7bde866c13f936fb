import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import { adminAuth } from "./auth.ts";
import { adminChannelAccountRoutes } from "./channel_accounts.ts";
import { adminContactTokenRoutes } from "./contact_tokens.ts";
import { adminOutboxRoutes } from "./outbox.ts";
import { adminSettingsRoutes } from "./settings.ts";
import { adminSetupRoutes } from "./setup.ts";
import { adminTeamRoutes } from "./teams.ts";
import { adminUserRoutes } from "./users.ts";

/** The admin API under /admin/v1, behind the admin token. */
export function adminRoutes(deps: Deps) {
  const app = newRouter();
  app.openAPIRegistry.registerComponent("securitySchemes", "AdminToken", {
    type: "http",
    scheme: "bearer",
    description: "The admin token (ADMIN_TOKEN)",
  });
  app.use("*", adminAuth(deps.config.ADMIN_TOKEN));
  app.route("/", adminTeamRoutes(deps));
  app.route("/", adminSetupRoutes(deps));
  app.route("/", adminOutboxRoutes(deps));
  app.route("/", adminContactTokenRoutes(deps));
  app.route("/", adminSettingsRoutes(deps));
  app.route("/", adminUserRoutes(deps));
  app.route("/", adminChannelAccountRoutes(deps));
  return app;
}
