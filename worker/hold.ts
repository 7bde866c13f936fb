/**
 * Quiet hours in the delivery pipeline (docs/sending.md, "Quiet hours"). A promotional message whose
 * recipient is inside the team's quiet window is prepared as usual but marked `held_until` the
 * window's end; deliver.ts records it pending (charged, like any message it records) without
 * handing it to a provider, and the job of its batch (or of its single send) comes back, delayed,
 * at the earliest such end to send it. Its batch is not counted meanwhile, so its execution and
 * trigger complete only once the last held message is sent.
 *
 * The delayed job is enqueued after the messages are recorded, as a retry after a temporary
 * failure is: should the process stop in between, the queue delivers the original job again, which
 * reads the held rows and enqueues it.
 */
import type { Db } from "../shared/db.ts";
import type { Deps } from "../shared/deps.ts";
import { heldUntil, type QuietHours, recipientZone } from "../shared/quiet_hours.ts";
import { teamSettings } from "../shared/team_settings.ts";
import type { Prepared } from "./prepare.ts";
import { deliveryKey, type DeliveryResult } from "./deliver.ts";
import { balancesChanged, refund } from "../shared/wallet.ts";
import { nextTryDelay } from "../shared/backoff.ts";
import { closeConversations } from "../shared/sending/conversations.ts";

/** The quiet hours a batch of an execution obeys, read once per batch, with the instant its messages are due. */
export interface QuietHold {
  hours: QuietHours;
  now: number;
}

/** The team's quiet hours for content of `category`: transactional messages are never held. */
export async function quietHoldOf(
  deps: Deps,
  teamId: string,
  category: "transactional" | "promotional",
): Promise<QuietHold | undefined> {
  if (category !== "promotional") return undefined;
  const hours = (await teamSettings(deps.sql, teamId)).quiet_hours;
  return hours ? { hours, now: deps.now() } : undefined;
}

/**
 * `p` held until the quiet window's end in its recipient's zone (the contact's
 * `custom_fields.timezone`, else the team's), when it is to be sent and due inside the window.
 */
export function withHold(hold: QuietHold | undefined, contactZone: string | null | undefined, p: Prepared): Prepared {
  if (!hold || p.outcome || !p.message) return p;
  const until = heldUntil(hold.now, hold.hours, recipientZone(hold.hours, contactZone));
  return until === null ? p : { ...p, held_until: until };
}

/** The earlier of two instants, either possibly absent. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** The later of two instants (or the longer of two waits), either possibly absent. */
export function latest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

/** What a delivery pass left for a later one. */
export interface Unfinished {
  /** Messages left pending after a temporary provider failure. */
  pending: number;
  retryAfterMs?: number;
  /** The earliest end of a hold among the messages held (see above). */
  heldUntil?: number;
}

/**
 * When the job of a pass comes back, and as which try: after the retry delay of its temporary
 * failures (counted as a try), or at the end of its earliest hold when that comes first (a hold is
 * no try). Undefined when nothing is left.
 */
export function nextPass(
  left: Unfinished,
  attempt: number,
  now: number,
): { attempt: number; delayMs: number } | undefined {
  const retry = left.pending > 0 ? nextTryDelay(attempt, left.retryAfterMs) : undefined;
  const hold = left.heldUntil === undefined ? undefined : Math.max(0, left.heldUntil - now);
  if (hold !== undefined && (retry === undefined || hold < retry)) return { attempt, delayMs: hold };
  return retry === undefined ? undefined : { attempt: attempt + 1, delayMs: retry };
}

/** Why a held message is not sent when its recipient is no longer one as its hold ends. */
export const NO_LONGER_RECIPIENT = "Not sent: no longer a recipient when its quiet hours ended";

/**
 * Which held messages a pass settles: those of `executionIds`, of one batch of them (`batchNo`), or
 * of these (execution, recipient) pairs alone (`keys`: a workflow step's pass takes some contacts of
 * its executions, the others being another job's), with any of them whose contact is gone.
 */
export interface HoldScope {
  executionIds: string[];
  batchNo?: number;
  keys?: { execution_id: string; recipient: string }[];
}

/**
 * The messages of these keys, and those whose contact is gone: its delivery key was anonymized
 * (shared/contacts/queries.ts), no pass can send it, and whichever pass finds it settles it.
 */
function ofKeys(db: Db, keys: { execution_id: string; recipient: string }[]) {
  return db`and ((execution_id, recipient) in (
      select * from unnest(${keys.map((k) => k.execution_id)}::uuid[], ${keys.map((k) => k.recipient)}::text[]))
    or (contact_id is not null and not exists (select 1 from contacts c where c.id = messages.contact_id)))`;
}

/**
 * Settles the messages in `scope` whose hold is over but which the pass did not send: their contact
 * unsubscribed or opted out meanwhile (the reason it was prepared with), or is gone or left the
 * send's audience (NO_LONGER_RECIPIENT). Each is filtered (or failed) and refunded, so that none
 * stays pending, charged, for good; `result.statuses` says so too. Only a pass that resumed recorded
 * messages (`DeliveryResult.resumed`) has any to look at.
 */
export async function settleEndedHolds(
  deps: Deps,
  prepared: Prepared[],
  result: DeliveryResult,
  scope: HoldScope,
): Promise<void> {
  if (!result.resumed) return;
  const { executionIds, batchNo, keys } = scope;
  const sendable = new Set(prepared.filter((p) => p.message && !p.outcome).map(deliveryKey));
  const outcomes = new Map(prepared.flatMap((p) => (p.outcome ? [[deliveryKey(p), p.outcome] as const] : [])));
  const now = new Date(deps.now());
  const refunded = await deps.sql.begin(async (tx) => {
    // Locked: a pass of the same batch beside this one (a redelivery) settles or sends each once.
    const rows = await tx<
      {
        id: string;
        team_id: string;
        trigger_id: string;
        execution_id: string;
        recipient: string;
        channel: string;
        to_address: string | null;
        cost_micros: number;
      }[]
    >`
      select id, team_id, trigger_id, execution_id, recipient, channel, to_address, cost_micros from messages
      where execution_id = any(${executionIds}::uuid[]) and status = 'pending' and held_until is not null
        and held_until <= ${now} and handed_at is null
        ${batchNo === undefined ? tx`` : tx`and batch_no = ${batchNo}`}
        ${keys === undefined ? tx`` : ofKeys(tx, keys)}
      for update`;
    const ended = rows.filter((r) => !sendable.has(deliveryKey(r)));
    if (ended.length === 0) return [];
    const outcome = (r: { execution_id: string; recipient: string }) => outcomes.get(deliveryKey(r));
    await tx`
      update messages m set status = v.status, error = v.error, cost_micros = 0
      from unnest(${ended.map((r) => r.id)}::text[], ${ended.map((r) => outcome(r)?.status ?? "filtered")}::text[],
        ${ended.map((r) => outcome(r)?.error ?? NO_LONGER_RECIPIENT)}::text[]) as v(id, status, error)
      where m.id = v.id`;
    // A charged WhatsApp message opened its conversation when it was recorded: refunded, it closes it,
    // or the number's next message of its category would ride free on a conversation nobody paid for.
    await closeConversations(
      tx,
      ended.filter((r) => r.channel === "whatsapp" && r.to_address && Number(r.cost_micros) > 0)
        .map((r) => ({ team_id: r.team_id, phone: r.to_address!, message_id: r.id })),
    );
    const refunds = new Map<string, { micros: number; trigger: string }>();
    for (const r of ended) {
      const sum = refunds.get(r.team_id) ?? { micros: 0, trigger: r.trigger_id };
      refunds.set(r.team_id, { ...sum, micros: sum.micros + Number(r.cost_micros) });
    }
    for (const [teamId, r] of refunds) {
      if (r.micros > 0) await refund(tx, teamId, r.micros, `trigger:${r.trigger}`, "Refund of held messages not sent");
    }
    for (const r of ended) result.statuses.set(deliveryKey(r), outcome(r)?.status ?? "filtered");
    return [...refunds.keys()];
  });
  balancesChanged(new Set(refunded));
}
