import type { AppEnv } from "../../shared/http/env.ts";
import type { SessionUser } from "./sessions.ts";

/** The context of the dashboard's signed-in pages: the user and the session's cookie token. */
export interface DashboardEnv {
  Variables: AppEnv["Variables"] & { user: SessionUser; sessionToken: string };
}
