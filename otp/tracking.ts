/**
 * The triggers of an OTP send: each channel's answer carries a `trigger_id` (and `execution_id`), and
 * like every accepted send it can be read with GET /api/v1/triggers/{id} (and the channel's execution
 * views). A sent message is recorded, finished, in Postgres beside the other sends; a sandbox_mode
 * one (nothing sent) only in KV for a day, written in the commit that stores the session.
 */
import type { Deps } from "../shared/deps.ts";
import { log } from "../shared/log.ts";
import type { UnitOfWork } from "../shared/engine/ports.ts";
import { recordFinished } from "../shared/sending/records.ts";
import type { Content, SendSpec } from "../shared/sending/spec.ts";
import { FINISHED_RECORD_TTL_MS, newTriggerRecord, type TriggerRecord } from "../shared/sending/trigger_record.ts";
import type { OtpChannel } from "./codes.ts";
import type { ChannelResult, PlannedMessage } from "./delivery.ts";

/** The trigger of one channel's message: what it was, and its final record. */
export interface OtpTrigger {
  spec: SendSpec;
  record: TriggerRecord;
}

/** What each channel delivers, for the trigger's records (an OTP has no template key of the team). */
function contentOf(channel: OtpChannel): Content {
  switch (channel) {
    case "email":
      return { channel, category: "transactional" };
    case "sms":
      return { channel, template_key: "verify-api-otp-sms", category: "transactional" };
    case "whatsapp":
      return { channel, template_key: "verify_api_otp_whatsapp", conversation_category: "AUTHENTICATION" };
  }
}

/** The finished trigger of each channel of a send (test key or sandbox: `sandbox`). */
export function otpTriggers(
  teamId: string,
  plans: PlannedMessage[],
  results: Partial<Record<OtpChannel, ChannelResult>>,
  sandbox: boolean,
  now: number,
): OtpTrigger[] {
  return plans.flatMap((plan) => {
    const result = results[plan.channel];
    if (!result) return [];
    const spec: SendSpec = {
      trigger_id: result.trigger_id,
      job_id: result.message_id,
      team_id: teamId,
      sandbox,
      trigger_type: plan.channel,
      recipient_type: `direct_${plan.channel}`,
      recipient: { type: "direct", address: plan.to },
      executions: [{ id: result.execution_id, content: contentOf(plan.channel) }],
      variables: {},
      metadata: {},
      created_at: now,
      scheduled_for: null,
    };
    const status = result.success ? "completed" : "failed";
    const counts = { total_contacts: 1, sent: result.success ? 1 : 0, failed: result.success ? 0 : 1, filtered: 0 };
    const record: TriggerRecord = {
      ...newTriggerRecord(spec),
      status,
      started_at: now,
      completed_at: now,
      executions: [{ id: result.execution_id, channel: plan.channel, status, counts, completed_at: now }],
    };
    return [{ spec, record }];
  });
}

/**
 * Writes sandbox triggers in a unit of work (the session's), two records each: GET /triggers/{id} and
 * the execution views (by either id) read them for a day.
 */
export async function putSandboxTriggers(deps: Deps, triggers: OtpTrigger[], unit: UnitOfWork): Promise<void> {
  const kept = { expected: null, ttlMs: FINISHED_RECORD_TTL_MS, activeUntil: null };
  for (const t of triggers) {
    await deps.records("send_triggers").put("", t.spec.trigger_id, t.record, kept, unit);
    for (const e of t.record.executions) {
      await deps.records("execution_triggers").put("", e.id, t.spec.trigger_id, kept, unit);
    }
  }
}

/** Records the triggers of messages sent; a failure is logged (the messages went, the answer goes). */
export async function recordOtpTriggers(deps: Deps, triggers: OtpTrigger[]): Promise<void> {
  try {
    await recordFinished(deps.sql, triggers.map((t) => t.spec), triggers.map((t) => t.record));
  } catch (err) {
    log("error", "otp triggers not recorded", { error: String(err) });
  }
}
