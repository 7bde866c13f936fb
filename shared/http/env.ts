import type { ApiKey, Team } from "../deps.ts";

/**
 * The typed Hono context of every route. Read its variables with `c.get("team")`, not `c.var.team`:
 * Hono's `c.var` builds a new object of every variable on each access (≈ 5 µs a request on the send
 * path in `bench --profile`, plus the garbage).
 */
export interface AppEnv {
  Variables: {
    requestId: string;
    team: Team;
    apiKey: ApiKey;
    /** Fields every error answer of the request carries unless its error sets them (see errorResponse). */
    errorFields?: Record<string, unknown>;
  };
}
