import { newUuidV7 } from "../shared/sending/ids.ts";
import type { ApiKey } from "../shared/deps.ts";
import type { Deps } from "../shared/deps.ts";
import { teamSettings } from "../shared/team_settings.ts";
import { type OtpTrigger, otpTriggers, putSandboxTriggers, recordOtpTriggers } from "./tracking.ts";
import { generateCode, hashCode, type OtpChannel } from "./codes.ts";
import {
  type ChannelResult,
  chargeUpFront,
  planMessages,
  refundUpFront,
  sandboxResults,
  sendMessages,
} from "./delivery.ts";
import { otpKeys } from "./keys.ts";
import { guardSend, phonesOf, refuseDisallowedCountries } from "./fraud_guard.ts";
import { limitIp, limitRecipients, reserveActiveSession } from "./limits.ts";
import { verificationFee } from "./pricing.ts";
import type { SendInput } from "./schemas.ts";
import { keepFor, OTP_CHANNELS, type OtpSession } from "./session.ts";
import { signSessionToken } from "./token.ts";

/** Who asks for a send: the team, its key, and the client's IP. */
export interface Caller {
  teamId: string;
  apiKey: ApiKey;
  ip: string;
}

/** What a send answers (before it becomes the HTTP body). */
export interface SendOutcome {
  session: OtpSession;
  token: string;
  results: Partial<Record<OtpChannel, ChannelResult>>;
  /** The codes, in sandbox mode only. */
  codes?: Partial<Record<OtpChannel, string>>;
}

/** A name given at the top level, else in metadata (where some clients put it). */
function nameOf(given: string | null | undefined, inMetadata: unknown): string | null {
  if (given) return given;
  return typeof inMetadata === "string" && inMetadata !== "" ? inMetadata.slice(0, 200) : null;
}

/** A fresh code per channel and the stored hash of each. */
export function newCodes(
  key: Uint8Array,
  sessionId: string,
  channels: OtpChannel[],
  length: number,
): { codes: Partial<Record<OtpChannel, string>>; hashes: Partial<Record<OtpChannel, string>> } {
  const codes: Partial<Record<OtpChannel, string>> = {};
  const hashes: Partial<Record<OtpChannel, string>> = {};
  for (const channel of channels) {
    codes[channel] = generateCode(length);
    hashes[channel] = hashCode(key, sessionId, channel, codes[channel]!);
  }
  return { codes, hashes };
}

/**
 * Opens an OTP session: refuses a country outside the team's list and a prefix the fraud guard
 * blocked (403), counts the limits (429), charges the wallet (402) unless the key is a test
 * key or the session is sandbox_mode, stores the session (codes only as HMACs) and sends one code per
 * channel — the session is stored first, so a code that arrives at once can be verified.
 */
export async function sendOtp(deps: Deps, caller: Caller, input: SendInput): Promise<SendOutcome> {
  const now = deps.now();
  const { teamId } = caller;
  const channels = OTP_CHANNELS.filter((ch) => input.channels.includes(ch));
  const recipients: Partial<Record<OtpChannel, string>> = {};
  for (const channel of channels) recipients[channel] = input.recipients[channel];

  const settings = await teamSettings(deps.sql, teamId);
  refuseDisallowedCountries(settings, recipients);
  await limitIp(deps, teamId, caller.ip, now);
  await limitRecipients(deps, teamId, [...new Set(Object.values(recipients))], now);
  // Sandbox and test-key sends deliver nothing, so they cannot pump: neither counted nor refused.
  const charging = !input.sandbox_mode && !caller.apiKey.test;
  if (charging) await guardSend(deps, teamId, phonesOf(recipients), settings.otp.fraud_guard, now);
  const slot = await reserveActiveSession(deps, teamId, now);
  // Time-ordered: sessions opened close together sit close together in KV, so the group commit of
  // their verifies rewrites fewer pages (about half the bytes a verify writes, against random ids).
  const id = newUuidV7(now);
  const keys = otpKeys(deps.config);
  const { codes, hashes } = newCodes(keys.code, id, channels, input.config.otp_length);
  const session: OtpSession = {
    id,
    team_id: teamId,
    channels,
    recipients,
    code_hashes: hashes,
    verified_channels: [],
    failed_attempts: {},
    max_attempts: input.config.max_attempts,
    otp_length: input.config.otp_length,
    expiry_minutes: input.config.expiry_minutes,
    expires_at: now + Math.round(input.config.expiry_minutes * 60_000),
    created_at: now,
    verified_at: null,
    verification_mode: input.verification_mode,
    metadata: input.metadata,
    add_contact: input.add_contact,
    contact: input.add_contact
      ? {
        email: input.recipients.email ?? null,
        phone: input.recipients.sms ?? input.recipients.whatsapp ?? null,
      }
      : null,
    first_name: nameOf(input.first_name, input.metadata.first_name),
    last_name: nameOf(input.last_name, input.metadata.last_name),
    sandbox_mode: input.sandbox_mode,
    test: caller.apiKey.test,
    resend_count: 0,
  };
  const reference = `otp:${id}`;
  const fee = charging ? verificationFee(deps.config) : 0;
  let plans;
  // Nothing is sent in sandbox_mode: its channels' results, and their triggers, go in with the session.
  let sandbox: { results: ReturnType<typeof sandboxResults>; triggers: ReturnType<typeof otpTriggers> } | undefined;
  try {
    plans = await planMessages(deps, teamId, { ...session, codes }, { live: charging });
    const bill = { teamId, plans, fee, reference };
    if (charging) await chargeUpFront(deps, bill);
    if (session.sandbox_mode) {
      const results = sandboxResults(plans);
      sandbox = { results, triggers: otpTriggers(teamId, plans, results, true, now) };
    }
    try {
      await storeNewSession(deps, session, now, sandbox?.triggers ?? []);
    } catch (err) {
      if (charging) await refundUpFront(deps, bill);
      throw err;
    }
  } finally {
    // Stored (now counted from the hot state) or given up.
    slot.release();
  }
  const token = signSessionToken(keys.token, { sessionId: id, teamId }, now);
  if (sandbox) return { session, token, results: sandbox.results, codes };
  const results = await sendMessages(deps, teamId, plans, { charging, sandbox: session.test, reference });
  await recordOtpTriggers(deps, otpTriggers(teamId, plans, results, session.test, deps.now()));
  return { session, token, results, codes: undefined };
}

/**
 * Writes a new session and its place in the team's active index, with the triggers of a sandbox
 * send, in one unit of work (on KV one commit, shared with concurrent sends).
 */
async function storeNewSession(deps: Deps, session: OtpSession, now: number, triggers: OtpTrigger[]): Promise<void> {
  const stored = await deps.atomically(async (unit) => {
    await deps.otpSessions.put(session.team_id, session.id, session, {
      expected: null,
      ttlMs: keepFor(session, now),
      activeUntil: session.expires_at,
    }, unit);
    await putSandboxTriggers(deps, triggers, unit);
  });
  // A fresh time-ordered id is never taken: losing means something else wrote it.
  if (!stored) throw new Error(`Cannot store OTP session ${session.id}: the id is taken`);
}
