import type { Context, Next } from "hono";
import type { Config } from "../config.ts";
import type { Deps, Team } from "../deps.ts";
import { RateLimitError } from "../errors.ts";
import type { WindowCounter } from "../window_counter.ts";
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

/**
 * Counts each request against its key's hourly limit, sets the X-RateLimit-* headers on the
 * answer, and refuses with 429 and Retry-After past the limit.
 */
export function rateLimit(deps: Deps, counter: WindowCounter) {
  return async function limitRate(c: Context<AppEnv>, next: Next): Promise<void> {
    const now = deps.now();
    const limit = hourlyLimit(deps.config, c.get("team").plan);
    const hit = await counter.hit("api", c.get("apiKey").id, limit, HOUR_MS, now);
    // Set before the handler runs: a header set on a finished response makes Hono rebuild it.
    c.header("X-RateLimit-Limit", String(hit.limit));
    c.header("X-RateLimit-Remaining", String(hit.remaining));
    c.header("X-RateLimit-Reset", String(Math.ceil(hit.resetAt / 1000)));
    if (!hit.allowed) throw new RateLimitError("Rate limit exceeded", (hit.resetAt - now) / 1000);
    await next();
  };
}
