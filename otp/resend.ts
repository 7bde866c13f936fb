import { teamSettings } from "../shared/team_settings.ts";
import type { Deps } from "../shared/deps.ts";
import { AppError, ConflictError } from "../shared/errors.ts";
import type { OtpChannel } from "./codes.ts";
import {
  type ChannelResult,
  chargeUpFront,
  planMessages,
  refundUpFront,
  sandboxResults,
  sendMessages,
} from "./delivery.ts";
import { otpKeys } from "./keys.ts";
import { phonesOf, refuseBlocked } from "./fraud_guard.ts";
import { limitRecipients } from "./limits.ts";
import { newCodes } from "./send.ts";
import { isExpired, isLocked, isSessionVerified, keepFor, type OtpSession, sessionNotFound } from "./session.ts";
import { readSessionToken } from "./token.ts";

const MAX_CONFLICTS = 20;

/** What a resend answers. */
export interface ResendOutcome {
  session: OtpSession;
  results: Partial<Record<OtpChannel, ChannelResult>>;
  codes?: Partial<Record<OtpChannel, string>>;
}

/** Why a session cannot be resent, if it cannot. */
function refusal(session: OtpSession | null, now: number): AppError | undefined {
  if (!session || isExpired(session, now)) return sessionNotFound();
  if (isSessionVerified(session)) return new AppError(400, "session_verified", "Session already verified");
  if (isLocked(session)) {
    return new AppError(400, "session_locked", "Session is locked due to too many failed attempts");
  }
  return undefined;
}

/**
 * Sends a new code on every channel of the session: the attempt counter resets, the expiry moves
 * to `expiry_minutes` from now, the token stays the same. Refused (403) to a prefix the fraud guard
 * blocked. Counts against the recipient limit (429)
 * and charges the delivery again (402); the verification fee was paid by the send.
 */
export async function resendOtp(deps: Deps, teamId: string, token: string, keyIsTest: boolean): Promise<ResendOutcome> {
  const keys = otpKeys(deps.config);
  const now = deps.now();
  const claims = await readSessionToken(keys.token, token);
  if (!claims || claims.teamId !== teamId) throw sessionNotFound();
  let stored = await deps.otpSessions.get<OtpSession>(teamId, claims.sessionId);
  const refused = refusal(stored?.value ?? null, now);
  if (refused) throw refused;
  const first = stored!.value;
  await limitRecipients(
    deps,
    teamId,
    [...new Set(Object.values(first.recipients))],
    now,
    "Too many OTP resends for this recipient",
  );

  const charging = !first.sandbox_mode && !first.test && !keyIsTest;
  // A session opened before its prefix was blocked gets no more codes either (not counted: the send was).
  if (charging) {
    const { fraud_guard } = (await teamSettings(deps.sql, teamId)).otp;
    await refuseBlocked(deps, teamId, phonesOf(first.recipients), fraud_guard, now);
  }
  const { codes, hashes } = newCodes(keys.code, first.id, first.channels, first.otp_length);
  // Charged is live: a test key's or a sandbox_mode session's messages are not really sent.
  const plans = await planMessages(deps, teamId, { ...first, codes }, { live: charging });
  const reference = `otp:${first.id}:resend:${first.resend_count + 1}`;
  const bill = { teamId, plans, fee: 0, reference };
  if (charging) await chargeUpFront(deps, bill);

  for (let round = 0; round < MAX_CONFLICTS; round++) {
    const current = stored?.value ?? null;
    const stop = refusal(current, now);
    if (stop) {
      if (charging) await refundUpFront(deps, bill);
      throw stop;
    }
    const next: OtpSession = {
      ...current!,
      code_hashes: hashes,
      failed_attempts: {},
      expires_at: now + Math.round(current!.expiry_minutes * 60_000),
      resend_count: current!.resend_count + 1,
    };
    const options = { expected: stored!.version, ttlMs: keepFor(next, now), activeUntil: next.expires_at };
    // One record and no job: a compare-and-set of its own, no unit of work needed.
    const committed = await deps.otpSessions.put(teamId, next.id, next, options);
    if (committed) {
      const results = next.sandbox_mode ? sandboxResults(plans) : await sendMessages(deps, teamId, plans, {
        charging,
        sandbox: next.test || keyIsTest,
        reference,
      });
      return { session: next, results, codes: next.sandbox_mode ? codes : undefined };
    }
    stored = await deps.otpSessions.get<OtpSession>(teamId, claims.sessionId);
  }
  if (charging) await refundUpFront(deps, bill);
  throw new ConflictError("Cannot resend: the session is changing too fast, try again", "otp_session_busy");
}
