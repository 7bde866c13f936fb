import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { accountPageRoutes } from "./account.tsx";
import { channelAccountsRoutes } from "./channel_accounts.tsx";
import type { DashboardEnv } from "./env.ts";
import { teamUserRoutes } from "./team_users.tsx";

/** The pages about accounts: the team's channel accounts, your own account, the team's people. */
export function accountRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  app.route("/", channelAccountsRoutes(deps));
  app.route("/", accountPageRoutes(deps));
  app.route("/", teamUserRoutes(deps));
  return app;
}
