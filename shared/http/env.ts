import type { ApiKey, Team } from "../deps.ts";

/** The typed Hono context of every route. */
export interface AppEnv {
  Variables: {
    requestId: string;
    team: Team;
    apiKey: ApiKey;
  };
}
