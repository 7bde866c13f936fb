import { createContact, findContactByEmail } from "../shared/contacts/queries.ts";
import type { Deps } from "../shared/deps.ts";
import { ConflictError } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import { countEmitted, eventJobs, listenersOf, newEvent, type WebhookEvent } from "../shared/webhook_events.ts";
import { codeMatches } from "./codes.ts";
import { guardVerification } from "./fraud_guard.ts";
import { otpKeys } from "./keys.ts";
import {
  allChannelsVerified,
  applyVerification,
  attemptsRemaining,
  isLocked,
  isSessionVerified,
  keepFor,
  type OtpSession,
} from "./session.ts";
import { readSessionToken } from "./token.ts";

/** Commits lost to concurrent calls on the same session before giving up. */
const MAX_CONFLICTS = 20;

/** A verify call whose codes were checked, right or wrong (see verifyBody). */
export interface VerifyOutcome {
  session: OtpSession;
  results: Record<string, { success: boolean }>;
  contactId?: string;
}

function matchAll(
  key: Uint8Array,
  sessionId: string,
  session: OtpSession | null,
  otps: Record<string, string>,
): Record<string, boolean> {
  const matches: Record<string, boolean> = {};
  for (const [channel, code] of Object.entries(otps)) {
    const hashes = session?.code_hashes ?? {};
    const stored = Object.hasOwn(hashes, channel) ? hashes[channel as keyof typeof hashes] : undefined;
    matches[channel] = codeMatches(key, sessionId, channel, code, stored);
  }
  return matches;
}

/**
 * Checks the codes of one call against the session of `token`: one read, then (when the call changes
 * the session) one unit of work written only if the session is still the version read (a lost race
 * is read and applied again, so two calls never both use the last attempt or both verify the
 * session); on KV concurrent verifies of other sessions share that commit. Every path — no session,
 * another team's token, a wrong code, expiry, a lock — computes the same HMACs and reads once; the
 * two paths that answer 'Session not found' do exactly the same work, so their timing tells nothing.
 */
export async function verifyOtp(
  deps: Deps,
  teamId: string,
  token: string,
  otps: Record<string, string>,
): Promise<VerifyOutcome> {
  const keys = otpKeys(deps.config);
  const now = deps.now();
  const claims = await readSessionToken(keys.token, token);
  const known = claims !== undefined && claims.teamId === teamId;
  // An unknown token still looks up (and finds nothing under) a random session id of the team.
  const sessionId = known ? claims.sessionId : crypto.randomUUID();
  for (let round = 0; round < MAX_CONFLICTS; round++) {
    const stored = await deps.otpSessions.get<OtpSession>(teamId, sessionId);
    const session = known ? stored?.value ?? null : null;
    const matches = matchAll(keys.code, sessionId, session, otps);
    const outcome = applyVerification(session, matches, now);
    const next = outcome.ok ? outcome.next : undefined;
    const events: WebhookEvent[] = [];
    if (next && isLocked(next) && !isLocked(session!)) events.push(otpEvent("otp.locked", next, now));
    if (outcome.ok && outcome.newlyVerified) events.push(otpEvent("otp.verified", outcome.session, now));
    // A lock or a verify tells the team's webhooks, whose endpoints are read (cached) only then.
    const webhooks = events.length > 0 ? eventJobs(await listenersOf(deps, [teamId]), teamId, events, now) : undefined;
    const guarded = outcome.ok && outcome.newlyVerified
      ? await guardVerification(deps, outcome.session, now)
      : undefined;
    // Nothing changed (an error, or channels verified before): the read answers, nothing is written.
    const committed = !next || await deps.atomically(async (unit) => {
      await deps.otpSessions.put(teamId, sessionId, next, {
        expected: stored!.version,
        ttlMs: keepFor(next, now),
        // Verified or locked: no longer one of the team's active sessions.
        activeUntil: isSessionVerified(next) || isLocked(next) ? null : next.expires_at,
      }, unit);
      // Its webhook events commit with it: none is lost, none reports a change that did not happen.
      for (const job of webhooks?.jobs ?? []) await deps.queue.enqueue(job, {}, unit);
      // Counted for the fraud guard with the verification itself.
      await guarded?.put(unit);
    });
    if (!committed) continue;
    if (webhooks) countEmitted(webhooks.events);
    guarded?.committed();
    if (!outcome.ok) throw outcome.error;
    const contactId = outcome.newlyVerified && outcome.session.add_contact
      ? await addContact(deps, outcome.session)
      : undefined;
    return { session: outcome.session, results: outcome.results, contactId };
  }
  throw new ConflictError("Cannot verify: the session is changing too fast, try again", "otp_session_busy");
}

/** The event telling a team's webhooks that a session was verified or locked. */
function otpEvent(type: "otp.verified" | "otp.locked", session: OtpSession, now: number): WebhookEvent {
  return newEvent(type, {
    session_id: session.id,
    channels: session.channels,
    verified_channels: session.verified_channels,
    verification_mode: session.verification_mode,
    metadata: session.metadata,
  }, now);
}

/** The contact of a session just verified with add_contact: found by email, or created once. */
async function addContact(deps: Deps, session: OtpSession): Promise<string | undefined> {
  const email = session.contact?.email;
  // A contact needs an email: a session without one makes none.
  if (!email) return undefined;
  try {
    const existing = await findContactByEmail(deps.sql, session.team_id, email);
    if (existing) return existing.id;
    const phone = session.contact?.phone;
    const contact = await createContact(deps.sql, session.team_id, {
      email,
      first_name: session.first_name,
      last_name: session.last_name,
      custom_fields: phone ? { phone } : {},
      metadata: { created_via: "otp_verification", otp_session_id: session.id },
    });
    return contact.id;
  } catch (err) {
    if (err instanceof ConflictError) return (await findContactByEmail(deps.sql, session.team_id, email))?.id;
    log("error", "otp add_contact failed", { team_id: session.team_id, error: String(err) });
    return undefined;
  }
}

/**
 * The 200 body of a verify: `verified` when at least one code of the call was right, else the
 * message 'Invalid OTP' (`success: false`, so that a client reading only `success` never takes a
 * wrong code for a right one). Its result is mirrored in `data`.
 */
export function verifyBody(outcome: VerifyOutcome) {
  const { session, results } = outcome;
  const result = {
    verified: Object.values(results).some((r) => r.success),
    verification_results: results,
    verified_channels: session.verified_channels,
    session_verified: isSessionVerified(session),
    attempts_remaining: attemptsRemaining(session),
  };
  const rest = {
    all_channels_verified: allChannelsVerified(session),
    session_id: session.id,
    expires_at: new Date(session.expires_at).toISOString(),
    metadata: session.metadata,
    ...(outcome.contactId ? { contact_id: outcome.contactId } : {}),
    data: result,
  };
  return result.verified ? { success: true as const, ...result, verified: true as const, ...rest } : {
    success: false as const,
    message: "Invalid OTP" as const,
    code: "invalid_otp" as const,
    ...result,
    verified: false as const,
    ...rest,
  };
}
