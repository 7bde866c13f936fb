import { AppError } from "../shared/errors.ts";
import type { OtpChannel } from "./codes.ts";

/** Every channel an OTP can be sent on, in answer order. */
export const OTP_CHANNELS: readonly OtpChannel[] = ["email", "sms", "whatsapp"];

/** How long a session is kept past its expiry, so that verify can still answer 'OTP has expired'. */
export const EXPIRED_KEPT_MS = 60 * 60_000;

/** An OTP session as stored in Deno KV: codes only as HMACs, never in clear. */
export interface OtpSession {
  id: string;
  team_id: string;
  channels: OtpChannel[];
  recipients: Partial<Record<OtpChannel, string>>;
  /** Base64 HMAC-SHA-256 of each channel's code. */
  code_hashes: Partial<Record<OtpChannel, string>>;
  /** Channels verified so far (accumulates over calls). */
  verified_channels: OtpChannel[];
  /** Failed attempts per channel; the lock applies to their sum. */
  failed_attempts: Partial<Record<OtpChannel, number>>;
  max_attempts: number;
  otp_length: number;
  expiry_minutes: number;
  /** Milliseconds since the epoch. */
  expires_at: number;
  created_at: number;
  /** When the session became verified (by its mode), once. */
  verified_at: number | null;
  verification_mode: "any" | "all";
  metadata: Record<string, unknown>;
  add_contact: boolean;
  /** The email and phone of the contact add_contact makes (any recipient given, sent to or not). */
  contact: { email: string | null; phone: string | null } | null;
  first_name: string | null;
  last_name: string | null;
  /** Created with sandbox_mode: nothing is sent or charged; codes are answered. */
  sandbox_mode: boolean;
  /** Created with a test key: outbox only, never charged. */
  test: boolean;
  resend_count: number;
}

/** Failed attempts over all channels. */
export function failedTotal(session: OtpSession): number {
  return Object.values(session.failed_attempts).reduce((sum, n) => sum + (n ?? 0), 0);
}

/** Attempts left before the session locks (never below 0). */
export function attemptsRemaining(session: OtpSession): number {
  return Math.max(0, session.max_attempts - failedTotal(session));
}

/** True when failed attempts have reached `max_attempts`. */
export function isLocked(session: OtpSession): boolean {
  return failedTotal(session) >= session.max_attempts;
}

/** True when `now` is past the stored expiry. */
export function isExpired(session: OtpSession, now: number): boolean {
  return now > session.expires_at;
}

/** True when every sent channel is verified. */
export function allChannelsVerified(session: OtpSession): boolean {
  return session.channels.every((ch) => session.verified_channels.includes(ch));
}

/** Verified by the session's mode: `any` needs one channel, `all` every sent channel. */
export function isSessionVerified(session: OtpSession): boolean {
  return session.verification_mode === "any" ? session.verified_channels.length > 0 : allChannelsVerified(session);
}

/** True while the session counts against the team's active-session limit. */
export function isActive(session: OtpSession, now: number): boolean {
  return !isExpired(session, now) && !isLocked(session) && !isSessionVerified(session);
}

/** The KV `expireIn` of a session: its expiry plus the time it is kept after. */
export function keepFor(session: OtpSession, now: number): number {
  return Math.max(1, session.expires_at - now) + EXPIRED_KEPT_MS;
}

/** The 400 'Session not found' (unknown, expired past keeping, or another team's token). */
export function sessionNotFound(): AppError {
  return new AppError(400, "session_not_found", "Session not found", { extra: { attempts_remaining: 0 } });
}

/** The outcome of one verify call on a session as read. */
export type Verification =
  | {
    ok: true;
    /** The session to write back (undefined when nothing changed). */
    next?: OtpSession;
    /** The session as it stands after this call. */
    session: OtpSession;
    /** Per channel of the call: was its code right (none right is a wrong code, answered 200). */
    results: Record<string, { success: boolean }>;
    /** This call made the session verified (by its mode). */
    newlyVerified: boolean;
  }
  | { ok: false; error: AppError };

/**
 * Applies one verify call (`matches`: channel → the code given was right) to a session, or to no
 * session. Unknown channels, a lock and expiry use no attempt (an error); a wrong code on an unverified
 * channel uses one (not an error: the answer says `verified: false`); a verified channel given again
 * changes nothing.
 */
export function applyVerification(
  session: OtpSession | null,
  matches: Record<string, boolean>,
  now: number,
): Verification {
  if (!session) return { ok: false, error: sessionNotFound() };
  const remaining = attemptsRemaining(session);
  const unknown = Object.keys(matches).find((ch) => !session.channels.includes(ch as OtpChannel));
  if (unknown !== undefined) {
    return {
      ok: false,
      error: new AppError(400, "channel_not_sent", `Channel '${unknown}' was not sent in this session`, {
        extra: { attempts_remaining: remaining },
      }),
    };
  }
  if (isLocked(session)) {
    return {
      ok: false,
      error: new AppError(
        400,
        "session_locked",
        "Maximum attempts exceeded: session is locked due to too many failed attempts",
        { extra: { attempts_remaining: 0 } },
      ),
    };
  }
  if (isExpired(session, now)) {
    return {
      ok: false,
      error: new AppError(400, "otp_expired", "OTP has expired", { extra: { attempts_remaining: remaining } }),
    };
  }
  const next: OtpSession = {
    ...session,
    verified_channels: [...session.verified_channels],
    failed_attempts: { ...session.failed_attempts },
  };
  const results: Record<string, { success: boolean }> = {};
  let changed = false;
  for (const [name, match] of Object.entries(matches)) {
    const channel = name as OtpChannel;
    results[channel] = { success: match };
    if (next.verified_channels.includes(channel)) continue;
    changed = true;
    if (match) next.verified_channels.push(channel);
    else next.failed_attempts[channel] = (next.failed_attempts[channel] ?? 0) + 1;
  }
  next.verified_channels.sort((a, b) => OTP_CHANNELS.indexOf(a) - OTP_CHANNELS.indexOf(b));
  const newlyVerified = session.verified_at === null && isSessionVerified(next);
  if (newlyVerified) next.verified_at = now;
  return { ok: true, next: changed ? next : undefined, session: next, results, newlyVerified };
}
