import type { Deps } from "../../shared/deps.ts";

/** Failed sign-ins an account may have in WINDOW_MS before it is locked until the window moves on. */
export const ACCOUNT_FAILURES = 5;
/** Failed sign-ins one IP address may have in WINDOW_MS (several people may share it). */
export const IP_FAILURES = 20;
const WINDOW_MS = 15 * 60_000;

/** A subject of the limit: the account (its email, lower-cased) or the client's IP address. */
type Subject = ["account" | "ip", string];

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
  const records = deps.records("dashboard_sign_in_locks");
  const locks = await Promise.all(subjects(email, ip).map(([kind, value]) => records.get<number>(kind, value)));
  const until = Math.max(0, ...locks.map((entry) => entry?.value ?? 0));
  return until > now ? until : undefined;
}

/** Counts a failed sign-in against the account and the IP; one that reaches its limit is locked. */
export async function countSignInFailure(deps: Deps, email: string, ip: string, now: number): Promise<void> {
  for (const subject of subjects(email, ip)) {
    const limit = subject[0] === "account" ? ACCOUNT_FAILURES : IP_FAILURES;
    const hit = await deps.counter.hitSliding(`dashboard_sign_in_${subject[0]}`, subject[1], limit, WINDOW_MS, now);
    if (hit.remaining > 0) continue;
    // Locked until the oldest of the last `limit` failures leaves the window.
    await lock(deps, subject, hit.resetAt, now);
  }
}

/** Records that `subject` is locked until `until`, unless a lock recorded meanwhile (another replica's) ends later. */
async function lock(deps: Deps, [kind, value]: Subject, until: number, now: number): Promise<void> {
  const records = deps.records("dashboard_sign_in_locks");
  for (let round = 0; round < 5; round++) {
    const current = await records.get<number>(kind, value);
    if (current && current.value >= until) return;
    const options = { expected: current?.version ?? null, ttlMs: Math.max(1, until - now), activeUntil: null };
    if (await records.put(kind, value, until, options)) return;
  }
}
