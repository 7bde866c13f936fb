import type { Context, Next } from "hono";
import type { Config } from "../config.ts";
import type { ApiKey, Deps, Team } from "../deps.ts";
import { RateLimitError } from "../errors.ts";
import type { AppEnv } from "./env.ts";

const HOUR_MS = 3_600_000;

/** Requests per hour allowed for a plan. */
export function hourlyLimit(config: Config, plan: Team["plan"]): number {
  switch (plan) {
    case "free":
      return config.RATE_LIMIT_FREE;
    case "pro":
      return config.RATE_LIMIT_PRO;
    case "plus":
      return config.RATE_LIMIT_PLUS;
    case "enterprise":
      return config.RATE_LIMIT_ENTERPRISE;
  }
}

/** A request counted against its key's hourly limit: its answer's X-RateLimit-* headers, and the 429 past the limit. */
export interface Counted {
  headers: Record<string, string>;
  refusal?: RateLimitError;
}

/** Counts a request of `apiKey` (of `team`) against its hourly limit, in the process's counter (`deps.counter`). */
async function countRequest(deps: Deps, team: Team, apiKey: ApiKey): Promise<Counted> {
  const now = deps.now();
  const hit = await deps.counter.hit("api", apiKey.id, hourlyLimit(deps.config, team.plan), HOUR_MS, now);
  const headers = {
    "X-RateLimit-Limit": String(hit.limit),
    "X-RateLimit-Remaining": String(hit.remaining),
    "X-RateLimit-Reset": String(Math.ceil(hit.resetAt / 1000)),
  };
  return hit.allowed
    ? { headers }
    : { headers, refusal: new RateLimitError("Rate limit exceeded", (hit.resetAt - now) / 1000) };
}

/**
 * Counts each request against its key's hourly limit, sets the X-RateLimit-* headers on the
 * answer, and refuses with 429 and Retry-After past the limit.
 */
export function rateLimit(deps: Deps) {
  return async function limitRate(c: Context<AppEnv>, next: Next): Promise<void> {
    const counted = await countRequest(deps, c.get("team"), c.get("apiKey"));
    // Set before the handler runs: a header set on a finished response makes Hono rebuild it.
    for (const [name, value] of Object.entries(counted.headers)) c.header(name, value);
    if (counted.refusal) throw counted.refusal;
    await next();
  };
}
