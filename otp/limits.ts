import type { Context } from "hono";
import { getConnInfo } from "hono/deno";
import type { Deps } from "../shared/deps.ts";
import { RateLimitError } from "../shared/errors.ts";
import type { AppEnv } from "../shared/http/env.ts";

const RECIPIENT_WINDOW_MS = 5 * 60_000;
const IP_WINDOW_MS = 60 * 60_000;

/** An IPv4 or IPv6 address as a proxy writes it (anything else in the header is ignored). */
const IP = /^[0-9A-Fa-f:.]{2,45}$/;

function firstForwarded(c: Context<AppEnv>): string | undefined {
  const first = c.req.header("x-forwarded-for")?.split(",")[0]?.trim();
  // Not an address (3,000 characters of garbage made the limit's KV key too large: a 500).
  return first && IP.test(first) ? first : undefined;
}

/**
 * The client's IP: the first `X-Forwarded-For` entry behind a trusted proxy, else the socket's
 * address. Without a socket (`app.request()` in tests) it falls back to `X-Forwarded-For`, then 'unknown'.
 */
export function clientIp(c: Context<AppEnv>, trustProxy: boolean): string {
  if (trustProxy) {
    const forwarded = firstForwarded(c);
    if (forwarded) return forwarded;
  }
  try {
    const address = getConnInfo(c).remote.address;
    if (address) return address;
  } catch {
    // No socket: the app was called directly.
  }
  return firstForwarded(c) ?? "unknown";
}

/** Counts one send from the client IP: at most OTP_IP_LIMIT_PER_HOUR an hour (0: no limit). */
export async function limitIp(deps: Deps, teamId: string, ip: string, now: number): Promise<void> {
  const limit = deps.config.OTP_IP_LIMIT_PER_HOUR;
  if (limit === 0) return;
  const hit = await deps.counter.hitSliding("otp_ip", `${teamId}:${ip}`, limit, IP_WINDOW_MS, now);
  if (!hit.allowed) {
    throw new RateLimitError("Too many OTP requests from this IP address", (hit.resetAt - now) / 1000);
  }
}

/**
 * Counts one send (or resend) to each recipient: at most OTP_RECIPIENT_LIMIT in 5 minutes
 * (0: no limit). The first recipient over the limit refuses the whole request.
 */
export async function limitRecipients(
  deps: Deps,
  teamId: string,
  recipients: string[],
  now: number,
  message = "Too many OTP requests for this recipient",
): Promise<void> {
  const limit = deps.config.OTP_RECIPIENT_LIMIT;
  if (limit === 0) return;
  for (const recipient of recipients) {
    const subject = `${teamId}:${recipient.toLowerCase()}`;
    const hit = await deps.counter.hitSliding("otp_recipient", subject, limit, RECIPIENT_WINDOW_MS, now);
    if (!hit.allowed) throw new RateLimitError(message, (hit.resetAt - now) / 1000);
  }
}

/**
 * This process's places per team: `held` by sends whose session is not yet stored, and the times
 * (performance.now) at which stored sessions gave theirs back. A listing of the active index that
 * began before a session's commit may miss it, so a place given back after the listing began still
 * counts: without that, a send that listed while three others committed saw none of them (4 of 8
 * concurrent sends got in under a limit of 3).
 */
const places = new Map<string, { held: number; releasedAt: number[] }>();
/** The tail of each team's queue of reservations (counting and reserving is one step). */
const queues = new Map<string, Promise<unknown>>();

function serialized<T>(teamId: string, fn: () => Promise<T>): Promise<T> {
  const previous = queues.get(teamId) ?? Promise.resolve();
  const run = previous.then(fn, fn);
  const tail = run.then(() => {}, () => {});
  queues.set(teamId, tail);
  tail.then(() => {
    if (queues.get(teamId) === tail) queues.delete(teamId);
  });
  return run;
}

/** A place among the team's active sessions, held until the session is written (or given up). */
export interface ActiveSlot {
  release(): void;
}

/**
 * Reserves a place for one more active session of the team: at most OTP_ACTIVE_SESSION_LIMIT
 * sessions that are neither verified, locked nor expired (0: no limit). Never over it within one
 * process (a send may count a session that committed while it listed twice, and be refused a place
 * that was free); across processes two sends may both take the last place.
 */
export function reserveActiveSession(deps: Deps, teamId: string, now: number): Promise<ActiveSlot> {
  return serialized(teamId, async () => {
    const limit = deps.config.OTP_ACTIVE_SESSION_LIMIT;
    if (limit > 0) {
      const listedFrom = performance.now();
      const active = await deps.otpSessions.countActive(teamId, now);
      const team = places.get(teamId);
      // Given back before the listing began: committed before it, so listed. After: maybe not.
      const late = team ? (team.releasedAt = team.releasedAt.filter((t) => t >= listedFrom)).length : 0;
      if (team && team.held === 0 && late === 0) places.delete(teamId);
      const count = active.count + (team?.held ?? 0) + late;
      if (count >= limit) {
        const wait = active.soonestEnd !== null ? (active.soonestEnd - now) / 1000 : 60;
        throw new RateLimitError("Too many active OTP sessions", wait);
      }
    }
    const team = places.get(teamId) ?? { held: 0, releasedAt: [] };
    places.set(teamId, team);
    team.held++;
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        team.held--;
        if (limit > 0) team.releasedAt.push(performance.now());
        else if (team.held === 0 && places.get(teamId) === team) places.delete(teamId);
      },
    };
  });
}
