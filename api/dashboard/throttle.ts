import type { Deps } from "../../shared/deps.ts";

/** Failed sign-ins an account may have in WINDOW_MS before it is locked until the window moves on. */
export const ACCOUNT_FAILURES = 5;
/** Failed sign-ins one IP address may have in WINDOW_MS (several people may share it). */
export const IP_FAILURES = 20;
const WINDOW_MS = 15 * 60_000;

/** A subject of the limit: the account (its email, lower-cased) or the client's IP address. */
type Subject = ["account" | "ip", string];

/** Where a locked subject is recorded until it may try again. */
function lockKey([kind, value]: Subject): Deno.KvKey {
  return ["dashboard_sign_in_lock", kind, value];
}

function subjects(email: string, ip: string): Subject[] {
  return [["account", email.trim().toLowerCase()], ["ip", ip]];
}

/**
 * When the account or the IP address may sign in again (ms since the epoch), or undefined when it
 * may now. Only failures count, so that signing in often never locks anyone out.
 */
export async function signInLockedUntil(
  deps: Deps,
  email: string,
  ip: string,
  now: number,
): Promise<number | undefined> {
  const locks = await deps.kv.getMany<number[]>(subjects(email, ip).map(lockKey));
  const until = Math.max(0, ...locks.map((entry) => entry.value ?? 0));
  return until > now ? until : undefined;
}

/** Counts a failed sign-in against the account and the IP; one that reaches its limit is locked. */
export async function countSignInFailure(deps: Deps, email: string, ip: string, now: number): Promise<void> {
  for (const subject of subjects(email, ip)) {
    const limit = subject[0] === "account" ? ACCOUNT_FAILURES : IP_FAILURES;
    const hit = await deps.counter.hitSliding(`dashboard_sign_in_${subject[0]}`, subject[1], limit, WINDOW_MS, now);
    if (hit.remaining > 0) continue;
    // Locked until the oldest of the last `limit` failures leaves the window.
    await deps.kv.set(lockKey(subject), hit.resetAt, { expireIn: Math.max(1, hit.resetAt - now) });
  }
}
