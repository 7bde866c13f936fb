/**
 * The OTP fraud guard: a team's allowed countries, and SMS-pumping detection per number prefix —
 * a burst of sends to one prefix that almost nobody verifies blocks the prefix for a while (the
 * way Twilio's Fraud Guard does). See docs/otp.md, "Fraud guard".
 */
import type { Deps } from "../shared/deps.ts";
import { ForbiddenError } from "../shared/errors.ts";
import type { UnitOfWork } from "../shared/engine/ports.ts";
import { log } from "../shared/log.ts";
import { metrics } from "../shared/metrics.ts";
import { countryOfE164 } from "../shared/phone.ts";
import { type FraudGuardSettings, type TeamSettings, teamSettings } from "../shared/team_settings.ts";
import { countEmitted, eventJobs, listenersOf, newEvent } from "../shared/webhook_events.ts";
import type { OtpChannel } from "./codes.ts";
import type { OtpSession } from "./session.ts";

/** The channels whose recipient is a phone number. */
const PHONE_CHANNELS = ["sms", "whatsapp"] as const;

/**
 * Sends younger than this are not judged yet: their codes may still be typed in. Without it a
 * legitimate burst (30 sign-ups in a minute) would be blocked before its users verify.
 */
export const GRACE_MS = 2 * 60_000;

/** Most hits one prefix's log keeps (its times live in one KV value of at most 64 KiB). */
const MAX_LOG = 5_000;

/** A blocked prefix, as stored until its cool-down ends. */
interface PrefixBlock {
  blocked_until: number;
  sends: number;
  verifications: number;
}

/**
 * The prefix a number is judged by: its first 7 digits (country calling code and the next digits,
 * `+14155550123` → "1415555"). Pumped numbers come in ranges a carrier hands out together — in
 * North America an area code and exchange, elsewhere a mobile operator's block — so a prefix this
 * long holds one range, while a legitimate user's neighbours rarely share it.
 */
export function numberPrefix(e164: string): string {
  return e164.slice(1, 8);
}

/** The phone numbers of a send's recipients. */
export function phonesOf(recipients: Partial<Record<OtpChannel, string>>): string[] {
  return PHONE_CHANNELS.flatMap((channel) => recipients[channel] ? [recipients[channel]] : []);
}

/**
 * Refuses (403 `otp_country_not_allowed`) a send with a phone number outside the team's allowed
 * countries: one such channel refuses the whole send. Email is not concerned.
 */
export function refuseDisallowedCountries(settings: TeamSettings, recipients: Partial<Record<OtpChannel, string>>) {
  const allowed = settings.otp.allowed_countries;
  if (allowed === null) return;
  for (const channel of PHONE_CHANNELS) {
    const to = recipients[channel];
    if (!to) continue;
    const country = countryOfE164(to);
    if (country && allowed.includes(country)) continue;
    metrics.otpFraudBlocks.inc({ reason: "country" });
    throw new ForbiddenError(
      `Cannot send OTP: ${channel} numbers in ${country ?? "an unknown country"} are not allowed for this team`,
      "otp_country_not_allowed",
    );
  }
}

function suspected(prefix: string, blockedUntil: number): ForbiddenError {
  metrics.otpFraudBlocks.inc({ reason: "pumping" });
  return new ForbiddenError(
    `Cannot send OTP: numbers starting +${prefix} are temporarily blocked for suspected SMS pumping ` +
      `until ${new Date(blockedUntil).toISOString()}`,
    "otp_fraud_suspected",
  );
}

/** How many hits a counter holds after a hit (a refused hit: the limit, all it keeps). */
async function counted(hit: Promise<{ allowed: boolean; limit: number; remaining: number }>): Promise<number> {
  const { allowed, limit, remaining } = await hit;
  return allowed ? limit - remaining : limit;
}

/** Where the verifications of a team's prefix are counted (the scope of their records). */
function verifiedScope(teamId: string, prefix: string): string {
  return `${teamId}:${prefix}`;
}

/**
 * Verifications under `prefix` in the window: each is a record active for the window from its
 * verification (see guardVerification).
 */
async function verificationsInWindow(deps: Deps, teamId: string, prefix: string, now: number): Promise<number> {
  return (await deps.records("otp_fraud_verified").countActive(verifiedScope(teamId, prefix), now)).count;
}

/**
 * Counts a send to `prefix` and judges it: sends older than the grace period, at least
 * `min_sends` of them, with verifications fewer than `min_verify_ratio` of them, is pumping (the
 * logs keep ten times `min_sends`, see below).
 * Answers the counts when it is.
 */
async function judge(deps: Deps, teamId: string, prefix: string, guard: FraudGuardSettings, now: number) {
  const subject = `${teamId}:${prefix}`;
  const windowMs = guard.window_minutes * 60_000;
  const cap = Math.min(10 * guard.min_sends, MAX_LOG);
  // One after the other: a log the counter creates while another is still loading can drop that one.
  const inWindow = await counted(deps.counter.hitSliding("otp_fraud_sends", subject, cap, windowMs, now));
  const fresh = await counted(deps.counter.hitSliding("otp_fraud_fresh", subject, cap, GRACE_MS, now));
  metrics.otpFraudCounted.inc({ kind: "send" });
  // A burst beyond what the logs keep, all within the grace period, is judged at once: it would
  // otherwise never age out of it while it lasts.
  const sends = fresh >= cap ? inWindow : Math.max(0, inWindow - fresh);
  if (sends < guard.min_sends) return undefined;
  const needed = Math.ceil(guard.min_verify_ratio * sends);
  const verifications = await verificationsInWindow(deps, teamId, prefix, now);
  return verifications < needed ? { sends, verifications } : undefined;
}

/**
 * Blocks `prefix` until the cool-down ends, unless another send (on any replica) blocked it first;
 * the block that is written emits `otp.fraud_blocked` in its unit of work (so exactly one event per
 * block, never lost). Answers when the prefix unblocks.
 */
async function block(
  deps: Deps,
  teamId: string,
  prefix: string,
  counts: { sends: number; verifications: number },
  guard: FraudGuardSettings,
  now: number,
): Promise<number> {
  const blocks = deps.records("otp_fraud_blocks");
  const blockMs = guard.block_minutes * 60_000;
  const state: PrefixBlock = { blocked_until: now + blockMs, ...counts };
  const event = newEvent("otp.fraud_blocked", {
    team_id: teamId,
    prefix: `+${prefix}`,
    sends: counts.sends,
    verifications: counts.verifications,
    blocked_until: new Date(state.blocked_until).toISOString(),
  }, now);
  const webhooks = eventJobs(await listenersOf(deps, [teamId]), teamId, [event], now);
  for (let round = 0; round < 5; round++) {
    const current = await blocks.get<PrefixBlock>(teamId, prefix);
    if (current && current.value.blocked_until > now) return current.value.blocked_until;
    const options = { expected: current?.version ?? null, ttlMs: blockMs, activeUntil: null };
    const committed = await deps.atomically(async (unit) => {
      await blocks.put(teamId, prefix, state, options, unit);
      for (const job of webhooks.jobs) await deps.queue.enqueue(job, {}, unit);
    });
    if (!committed) continue;
    metrics.otpPrefixesBlocked.inc();
    countEmitted(webhooks.events);
    log("warn", "otp prefix blocked for suspected SMS pumping", { team_id: teamId, prefix, ...counts });
    return state.blocked_until;
  }
  return state.blocked_until;
}

/**
 * Refuses (403 `otp_fraud_suspected`) a send or resend to a prefix the guard blocked; answers the
 * prefixes of `phones`.
 */
export async function refuseBlocked(
  deps: Deps,
  teamId: string,
  phones: string[],
  guard: FraudGuardSettings,
  now: number,
): Promise<string[]> {
  if (!guard.enabled || phones.length === 0) return [];
  const prefixes = [...new Set(phones.map(numberPrefix))];
  const records = deps.records("otp_fraud_blocks");
  const blocks = await Promise.all(prefixes.map((p) => records.get<PrefixBlock>(teamId, p)));
  blocks.forEach((entry, i) => {
    if (entry && entry.value.blocked_until > now) throw suspected(prefixes[i], entry.value.blocked_until);
  });
  return prefixes;
}

/**
 * Refuses (403 `otp_fraud_suspected`) a send to a blocked prefix, else counts it, and blocks the
 * prefix when the count makes it pumping (that send refused too). Nothing is counted when the guard
 * is off.
 */
export async function guardSend(
  deps: Deps,
  teamId: string,
  phones: string[],
  guard: FraudGuardSettings,
  now: number,
): Promise<void> {
  for (const prefix of await refuseBlocked(deps, teamId, phones, guard, now)) {
    const pumping = await judge(deps, teamId, prefix, guard, now);
    if (pumping) throw suspected(prefix, await block(deps, teamId, prefix, pumping, guard, now));
  }
}

/** A verification for the guard to count, written in the unit of work that verifies the session. */
export interface GuardVerification {
  put(unit: UnitOfWork): Promise<void>;
  /** Called once the unit committed. */
  committed(): void;
}

/**
 * What the verification of `session` writes for the guard: a record per prefix of its phone numbers,
 * active (counted) for the window. Undefined when nothing is counted: no phone number, the guard off,
 * a sandbox or test-key session (they were not counted as sends either), or the settings unread —
 * a verify must not fail for the guard, and one verification missed only makes it a little stricter.
 */
export async function guardVerification(
  deps: Deps,
  session: OtpSession,
  now: number,
): Promise<GuardVerification | undefined> {
  const prefixes = [...new Set(phonesOf(session.recipients).map(numberPrefix))];
  if (session.sandbox_mode || session.test || prefixes.length === 0) return undefined;
  let guard: FraudGuardSettings;
  try {
    guard = (await teamSettings(deps.sql, session.team_id)).otp.fraud_guard;
  } catch (err) {
    log("error", "otp verification not counted by the fraud guard", { team_id: session.team_id, error: String(err) });
    return undefined;
  }
  if (!guard.enabled) return undefined;
  const windowMs = guard.window_minutes * 60_000;
  // A session is verified once (its own compare-and-set), so its record is always new.
  const options = { expected: null, ttlMs: windowMs, activeUntil: now + windowMs };
  return {
    async put(unit) {
      for (const prefix of prefixes) {
        const scope = verifiedScope(session.team_id, prefix);
        await deps.records("otp_fraud_verified").put(scope, session.id, 1, options, unit);
      }
    },
    committed: () => metrics.otpFraudCounted.inc({ kind: "verification" }, prefixes.length),
  };
}
