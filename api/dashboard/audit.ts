import type { Context } from "hono";
import { log } from "../../shared/log.ts";
import type { DashboardEnv } from "./env.ts";

/** Logs a change made in the dashboard with who made it (team and user) and the request, plus `fields`. */
export function auditChange(c: Context<DashboardEnv>, message: string, fields: Record<string, unknown>): void {
  const user = c.get("user");
  log("info", message, { request_id: c.get("requestId"), team_id: user.teamId, user_id: user.id, ...fields });
}
