import type { Deps } from "../shared/deps.ts";
import type { Db } from "../shared/db.ts";
import { isDataRefusal, isUniqueViolation } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import { metrics } from "../shared/metrics.ts";
import { outboxContent, outboxMessageId } from "../shared/providers/outbox.ts";
import { noProviderNote, outboxForWantOfProvider } from "../shared/providers/registry.ts";
import type { Provider } from "../shared/providers/types.ts";
import { UNPAID_REASON } from "../shared/sending/pricing.ts";
import type { MessageStatus } from "../shared/sending/trigger_record.ts";
import { balancesChanged, charge, chargeEach, refund } from "../shared/wallet.ts";
import { bulkRows } from "../shared/bulk.ts";
import type { Prepared } from "./prepare.ts";
import {
  billConversations,
  conversationsRefunded,
  conversationsUnpaid,
  ledgerEntries,
  ledgerEntry,
} from "./conversations.ts";
import { messageEvent, type MessageOutcome, outcomeOf } from "./events.ts";
import { relayEvents, type StagedEvent, stageEvents } from "../shared/event_outbox.ts";
import { type Listeners, listenersOf, listening } from "../shared/webhook_events.ts";
import { type Outcome, sendAll, type ToSend } from "./handoff.ts";
import { handOverLog, providerId, sentAttempts, sentProvider, withSentWith } from "./hand_over_log.ts";
import { deleteDeviceTokens } from "./recipients.ts";
import { earliest } from "./hold.ts";
import { countNotes } from "./notes.ts";
import { accountHolders, routeThroughAccounts } from "./failover_send.ts";
import type { AccountHolders } from "../shared/channel_accounts.ts";

/** Where a message stands once a delivery pass is over. */
export type FinalStatus = MessageStatus;

/** What a delivery pass did. */
export interface DeliveryResult {
  /** The status of each prepared message, by `execution_id\0recipient`. */
  statuses: Map<string, FinalStatus>;
  /** Messages left pending after a temporary provider failure (to try again later). */
  pending: number;
  /** The longest wait a provider asked for (Retry-After) among the pending ones, when one did. */
  retryAfterMs?: number;
  /** True when some messages were recorded by an earlier pass (a redelivered job). */
  resumed: boolean;
  /** The execution of each message failed without a row (Postgres refused it; see deliverApart). */
  unrecorded: string[];
  /** The earliest end of a quiet-hours hold among the messages left held (worker/hold.ts). */
  heldUntil?: number;
}

/** The key of a message within its execution. */
export function deliveryKey(p: { execution_id: string; recipient: string }): string {
  return `${p.execution_id}\0${p.recipient}`;
}

interface Stored {
  id: string;
  execution_id: string;
  recipient: string;
  status: FinalStatus;
  cost_micros: number;
  /** Handed to a provider that cannot take it twice, by a pass that has not recorded the answer. */
  handed_at: Date | null;
  /** Held by quiet hours until then (worker/hold.ts). */
  held_until: Date | null;
  /** The channel account it was handed to, when it went through failover (migration 024). */
  handed_account: string | null;
}

/** Some messages were recorded by an earlier pass: start again, reading them first. */
class Resume extends Error {}

/**
 * Delivers prepared messages exactly once per (execution, recipient):
 * 1. in one transaction: record the new messages in one INSERT (outbox messages as sent, their
 *    outbox copy in the same row; others pending, live ones of a channel with no provider too
 *    when their team has channel accounts for it), charge the wallet for them (one statement per
 *    team; message by message only when the total does not fit, failing those that cannot be paid,
 *    so the balance never goes below zero; WhatsApp once per conversation: conversations.ts).
 *    The first try assumes nothing was recorded before; when the INSERT meets rows of an earlier
 *    pass (a redelivered job) the transaction is rolled back and run again reading those rows
 *    first, so nothing is charged or sent twice;
 * 2. send the pending ones (new, and any an interrupted pass left) to their providers with their
 *    stable message id. A provider that cannot take a message twice (Twilio) gets it only once its
 *    row says so (`handed_at`); a message an interrupted pass handed to it is never re-sent: once
 *    that pass's hand-over window is over, it is sent if the provider's log has it, else failed (handoff.ts).
 *    A live message of a team with channel accounts goes through them in order instead, each hand-over
 *    recorded first, and is resumed only through the account it was last handed to (failover_send.ts);
 * 3. record the outcomes in one UPDATE, refund permanent failures, drop invalid push tokens.
 * With `lastAttempt`, a temporary failure is final (unless another pass holds the message: see
 * handoff.ts); otherwise it stays pending for a later pass.
 */
export async function deliver(
  deps: Deps,
  prepared: Prepared[],
  options: { lastAttempt: boolean },
): Promise<DeliveryResult> {
  const items = withoutNul(prepared);
  // Whose webhooks want the outcomes, read before the transactions that stage them (see event_outbox.ts).
  const [listeners, holders] = await Promise.all([
    listenersOf(deps, items.map((p) => p.team_id)),
    accountHolders(deps, items),
  ]);
  let recorded: Recorded | undefined;
  for (let attempt = 0; !recorded; attempt++) {
    try {
      recorded = await deps.sql.begin((tx) => record(deps, tx, items, attempt > 0, { listeners, holders }));
    } catch (err) {
      if (isDataRefusal(err)) return await deliverApart(deps, items, options, err);
      if (!(err instanceof Resume) || attempt >= 3) throw err;
    }
  }
  // The charges have committed: the next pre-check reads the balance again.
  balancesChanged(new Set(items.filter((p) => p.cost > 0 && !p.sandbox).map((p) => p.team_id)));
  const { statuses, toSend, resumed } = recorded;
  const staged = [...recorded.staged];
  await routeThroughAccounts(deps, toSend, holders);
  const outcomes = await sendAll(toSend, handOverLog(deps, listeners, staged));
  let pending = 0;
  let retryAfterMs: number | undefined;
  const updates: Update[] = [];
  const invalidTokens = new Map<string, string[]>();
  for (const [i, outcome] of outcomes.entries()) {
    const { p, cost, provider } = toSend[i];
    const key = deliveryKey(p);
    if (outcome.ok) {
      // Recorded as soon as the provider answered (see handOverLog), or with the others now.
      if (!outcome.recorded) {
        const event = outcomeOf(p, outcome.id, "sent", { provider_message_id: outcome.providerMessageId });
        updates.push({ p, status: "sent", error: null, cost, refund: 0, event, outcome });
      }
      statuses.set(key, "sent");
      metrics.deliveries.inc({ channel: p.channel, outcome: "sent" });
      continue;
    }
    if (outcome.temporary && (!options.lastAttempt || outcome.held)) {
      pending++;
      retryAfterMs = longest(retryAfterMs, outcome.retryAfterMs);
      statuses.set(key, "pending");
      continue;
    }
    const error = outcome.temporary ? `${outcome.error} (gave up after retries)` : outcome.error;
    const event = outcomeOf(p, outcome.id, "failed", { error });
    updates.push({ p, status: "failed", error, cost: 0, refund: cost, event, outcome });
    statuses.set(key, "failed");
    metrics.deliveries.inc({ channel: p.channel, outcome: "failed" });
    if (outcome.invalidToken && p.to_address) {
      invalidTokens.set(p.team_id, [...invalidTokens.get(p.team_id) ?? [], p.to_address]);
    }
    log("warn", "message failed", { provider: provider.name, channel: p.channel, message_id: outcome.id, error });
  }
  if (updates.length > 0 || invalidTokens.size > 0) {
    const { refunded, events } = await deps.sql.begin(async (tx) => {
      // Only what this pass settled is refunded and reported: another pass may have settled the rest.
      const landed = await updateStatuses(tx, updates, deps.now());
      // Before the wallet, as the recording transaction locks them.
      await conversationsRefunded(
        tx,
        landed.filter((u) => u.refund > 0).map((u) => ({ p: u.p, messageId: u.event.message_id })),
      );
      const refunds = new Map<string, number>();
      for (const u of landed) if (u.refund > 0) refunds.set(u.p.team_id, (refunds.get(u.p.team_id) ?? 0) + u.refund);
      for (const [teamId, micros] of refunds) {
        await refund(tx, teamId, micros, `trigger:${items[0].trigger_id}`, "Refund of messages the provider refused");
      }
      for (const [teamId, tokens] of invalidTokens) await deleteDeviceTokens(tx, teamId, tokens);
      const events = await stageEvents(tx, listeners, landed.map((u) => messageEvent(u.event)), deps.now());
      return { refunded: [...refunds.keys()], events };
    });
    balancesChanged(refunded);
    staged.push(...events);
  }
  await relayEvents(deps, staged);
  return { statuses, pending, retryAfterMs, resumed, unrecorded: [], heldUntil: recorded.heldUntil };
}

/**
 * Postgres refused the data of a pass (one message's row: a device token stored before tokens were
 * limited overflows the message index): deliver each half apart, down to the one message at fault,
 * which fails alone with the reason. Without this, that one message failed every try of the whole
 * batch (a page of a fan-out, or the sends of several requests), and the queue gave them all up.
 */
async function deliverApart(
  deps: Deps,
  items: Prepared[],
  options: { lastAttempt: boolean },
  err: unknown,
): Promise<DeliveryResult> {
  if (items.length === 1) {
    const [p] = items;
    const error = `Cannot record the message: ${err instanceof Error ? err.message : String(err)}`;
    log("error", "message not recorded", { trigger_id: p.trigger_id, execution_id: p.execution_id, error });
    metrics.deliveries.inc({ channel: p.channel, outcome: "failed" });
    return {
      statuses: new Map([[deliveryKey(p), "failed"]]),
      pending: 0,
      resumed: false,
      unrecorded: [p.execution_id],
    };
  }
  const half = Math.ceil(items.length / 2);
  const results = [
    await deliver(deps, items.slice(0, half), options),
    await deliver(deps, items.slice(half), options),
  ];
  return {
    statuses: new Map(results.flatMap((r) => [...r.statuses])),
    pending: results[0].pending + results[1].pending,
    retryAfterMs: longest(results[0].retryAfterMs, results[1].retryAfterMs),
    resumed: results[0].resumed || results[1].resumed,
    unrecorded: [...results[0].unrecorded, ...results[1].unrecorded],
    heldUntil: earliest(results[0].heldUntil, results[1].heldUntil),
  };
}

function longest(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}

const NUL = "\u0000";
/** The text fields of a message that can carry request input (template variables). */
const TEXT_FIELDS = ["subject", "html", "text", "title", "fromName", "replyTo"] as const;

/**
 * Drops U+0000 from the messages' text. Postgres text cannot hold it (nor can an SMS or a mail
 * header), and a template variable of a request can carry it: left in, the recording transaction
 * fails on every try, and with it the whole batch, other sends and other teams included.
 */
export function withoutNul(items: Prepared[]): Prepared[] {
  const dirty = (p: Prepared) => p.message && TEXT_FIELDS.some((f) => p.message![f]?.includes(NUL));
  if (!items.some(dirty)) return items;
  return items.map((p) => {
    if (!dirty(p)) return p;
    const message = { ...p.message! };
    for (const f of TEXT_FIELDS) {
      const text = message[f];
      if (text !== undefined) message[f] = text.replaceAll(NUL, "");
    }
    return { ...p, message };
  });
}

interface Recorded {
  statuses: Map<string, FinalStatus>;
  toSend: ToSend[];
  resumed: boolean;
  /** The webhook events of the outcomes the transaction recorded, to relay once it commits. */
  staged: StagedEvent[];
  /** The earliest end of a hold among the pending messages not sent for it. */
  heldUntil?: number;
}

/** Step 1: one transaction that records and charges for the new messages. */
async function record(
  deps: Deps,
  tx: Db,
  items: Prepared[],
  resume: boolean,
  { listeners, holders }: { listeners: Listeners; holders: AccountHolders },
): Promise<Recorded> {
  const stored = resume ? await findStored(tx, items) : new Map<string, Stored>();
  const statuses = new Map<string, FinalStatus>();
  const toSend: ToSend[] = [];
  const fresh: Prepared[] = [];
  let heldUntil: number | undefined;
  for (const p of items) {
    const found = stored.get(deliveryKey(p));
    if (!found) {
      fresh.push(p);
      continue;
    }
    statuses.set(deliveryKey(p), found.status);
    // Held by an earlier pass: its hold is the one recorded, over until then.
    const hold = found.status === "pending" ? found.held_until?.getTime() : undefined;
    if (hold !== undefined && hold > deps.now()) heldUntil = earliest(heldUntil, hold);
    else if (found.status === "pending" && p.message) {
      const provider = deps.providers.get(p.channel, { sandbox: p.sandbox });
      const message = { ...p.message, id: found.id };
      const handedAt = found.handed_at?.getTime();
      const handedAccount = found.handed_account ?? undefined;
      toSend.push({ p, message, provider, cost: found.cost_micros, handedAt, handedAccount });
    }
  }
  const now = new Date(deps.now());
  const rows: Row[] = [];
  const providers = new Map<Prepared, Provider>();
  /** Live messages kept in the outbox for want of a provider: not charged (see outboxForWantOfProvider). */
  const unbilled = new Set<Prepared>();
  for (const p of fresh) {
    const provider = p.outcome || !p.message ? undefined : deps.providers.get(p.channel, { sandbox: p.sandbox });
    if (provider) providers.set(p, provider);
    // A live message of a channel with no provider goes through its team's own accounts when it has
    // some, like any live message (pending, charged); else it is kept in the outbox.
    const ownAccounts = provider === deps.providers.outbox && !p.sandbox && holders.has(p.team_id, p.channel);
    const outboxed = provider === deps.providers.outbox && !ownAccounts;
    if (outboxed && outboxForWantOfProvider(deps, p.channel, p.sandbox)) unbilled.add(p);
    // A held message waits pending, even for the outbox (which records the others sent at once).
    const status: FinalStatus = p.outcome?.status ??
      (!p.message ? "failed" : outboxed && !p.held_until ? "sent" : "pending");
    const copy = status === "sent" ? outboxContent(p.message!) : undefined;
    rows.push({
      id: p.id,
      execution_id: p.execution_id,
      recipient: p.recipient,
      to_address: p.to_address,
      contact_id: p.contact_id,
      status,
      // Through the team's accounts: the provider is named once one of them has sent it.
      provider: ownAccounts ? null : provider?.name ?? null,
      provider_message_id: copy ? outboxMessageId(p.id) : null,
      cost_micros: status === "failed" || status === "filtered" || unbilled.has(p) ? 0 : p.cost,
      error: p.outcome?.error ?? (p.message ? null : "Nothing to send"),
      sent_at: copy ? now : null,
      in_outbox: copy !== undefined,
      outbox_subject: copy?.subject ?? null,
      outbox_body: copy?.body ?? null,
      missing_variables: p.missing?.join(",") ?? null,
      note: unbilled.has(p) ? noProviderNote(p.channel) : null,
      held_until: status === "pending" && p.held_until ? new Date(p.held_until) : null,
    });
  }
  const payable = fresh.filter((p) => providers.has(p) && !unbilled.has(p));
  // WhatsApp: a message inside an open conversation of its category to its number costs nothing.
  const conversations = await billConversations(tx, payable, now.getTime());
  rows.forEach((row, i) => {
    const note = conversations.free.get(fresh[i]);
    if (note) Object.assign(row, { cost_micros: 0, note });
  });
  await insertRows(tx, fresh, rows);
  const unpaid = await chargeFor(tx, payable.filter((p) => !conversations.free.has(p)));
  if (unpaid.size > 0) await conversationsUnpaid(tx, conversations, unpaid);
  if (unpaid.size > 0) await markUnpaid(tx, [...unpaid]);
  // A message riding on a conversation the wallet could not open lost its note with it (conversationsUnpaid).
  await countNotes(
    tx,
    rows.map((row, i) => {
      const p = fresh[i];
      const note = unpaid.has(p) && conversations.free.has(p) ? null : row.note;
      return { trigger_id: p.trigger_id, missing_variables: row.missing_variables, note };
    }),
  );
  // The outcomes decided here, for webhooks: built only when some endpoint of the pass's teams listens.
  const decided: MessageOutcome[] = [];
  const reporting = listening(listeners);
  rows.forEach((row, i) => {
    const p = fresh[i];
    const status: FinalStatus = unpaid.has(p) ? "failed" : row.status;
    statuses.set(deliveryKey(p), status);
    if (reporting && status === "sent") {
      decided.push(outcomeOf(p, p.id, "sent", { provider_message_id: row.provider_message_id }));
    }
    if (reporting && status === "failed") {
      decided.push(outcomeOf(p, p.id, "failed", { error: unpaid.has(p) ? UNPAID_REASON : row.error }));
    }
    if (status !== "pending") metrics.deliveries.inc({ channel: p.channel, outcome: status });
    if (status === "pending" && row.held_until) heldUntil = earliest(heldUntil, p.held_until);
    else if (status === "pending") {
      toSend.push({ p, message: p.message!, provider: providers.get(p)!, cost: row.cost_micros });
    }
  });
  const staged = await stageEvents(tx, listeners, decided.map(messageEvent), now.getTime());
  return { statuses, toSend, resumed: resume, staged, heldUntil };
}

/** The columns of a message row that vary per recipient (the rest is shared by the batch). */
interface Row {
  id: string;
  execution_id: string;
  recipient: string;
  to_address: string | null;
  contact_id: string | null;
  status: FinalStatus;
  provider: string | null;
  provider_message_id: string | null;
  cost_micros: number;
  error: string | null;
  sent_at: Date | null;
  /** Sent through the outbox, whose copy (subject, body) the row keeps: see migration 011. */
  in_outbox: boolean;
  outbox_subject: string | null;
  outbox_body: string | null;
  /** Template variables that rendered empty, comma-separated; and why a message is not what it seems (014). */
  missing_variables: string | null;
  note: string | null;
  /** Held by quiet hours until then (migration 026). */
  held_until: Date | null;
}

/** The unique key of a message within its execution (see deliveryKey). */
const DELIVERY_KEY_CONSTRAINT = "messages_execution_id_recipient_key";

/**
 * Records message rows in one INSERT (see bulkRows). A row an earlier pass recorded breaks the
 * delivery key: the pass starts again reading what was recorded (Resume). A plain INSERT, not ON
 * CONFLICT DO NOTHING: that makes each row a speculative insertion, dearer for every batch, to
 * serve only the rare pass that resumes another.
 */
async function insertRows(tx: Db, fresh: Prepared[], rows: Row[]): Promise<void> {
  if (rows.length === 0) return;
  const col = <K extends keyof Row>(k: K) => rows.map((r) => r[k]);
  const of = <K extends keyof Prepared>(k: K) => fresh.map((p) => p[k] as string | number);
  try {
    await tx`
      insert into messages ${
      bulkRows(tx, {
        id: { type: "text", values: col("id") },
        team_id: { type: "uuid", values: of("team_id") },
        trigger_id: { type: "uuid", values: of("trigger_id") },
        execution_id: { type: "uuid", values: col("execution_id") },
        channel: { type: "text", values: of("channel") },
        batch_no: { type: "int", values: of("batch_no") },
        template_key: { type: "text", values: fresh.map((p) => p.template_key) },
        recipient: { type: "text", values: col("recipient") },
        to_address: { type: "text", values: col("to_address") },
        contact_id: { type: "uuid", values: col("contact_id") },
        status: { type: "text", values: col("status") },
        provider: { type: "text", values: col("provider") },
        provider_message_id: { type: "text", values: col("provider_message_id") },
        cost_micros: { type: "bigint", values: col("cost_micros") },
        error: { type: "text", values: col("error") },
        sent_at: { type: "timestamptz", values: rows.map((r) => r.sent_at?.toISOString() ?? null) },
        in_outbox: { type: "boolean", values: col("in_outbox") },
        outbox_subject: { type: "text", values: col("outbox_subject") },
        outbox_body: { type: "text", values: col("outbox_body") },
        missing_variables: { type: "text", values: col("missing_variables") },
        note: { type: "text", values: col("note") },
        held_until: { type: "timestamptz", values: rows.map((r) => r.held_until?.toISOString() ?? null) },
      })
    }`;
  } catch (err) {
    if (isUniqueViolation(err) && err.constraint_name === DELIVERY_KEY_CONSTRAINT) {
      throw new Resume("Messages recorded by an earlier pass");
    }
    throw err;
  }
}

/** Messages the wallet could not pay for: failed, nothing charged, not in the outbox. */
async function markUnpaid(tx: Db, unpaid: Prepared[]): Promise<void> {
  await tx`
    update messages m set status = 'failed', error = ${UNPAID_REASON}, cost_micros = 0, provider_message_id = null,
      sent_at = null, in_outbox = false, outbox_subject = null, outbox_body = null, held_until = null
    from unnest(${unpaid.map((p) => p.execution_id)}::uuid[], ${unpaid.map((p) => p.recipient)}::text[])
      as k(execution_id, recipient)
    where m.execution_id = k.execution_id and m.recipient = k.recipient`;
}

/** Messages already recorded for these (execution, recipient) pairs. */
async function findStored(tx: Db, items: Prepared[]): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  if (items.length === 0) return out;
  const rows = await tx<Stored[]>`
    select m.id, m.execution_id, m.recipient, m.status, m.cost_micros, m.handed_at, m.held_until, m.handed_account
    from messages m
    join unnest(${items.map((p) => p.execution_id)}::uuid[], ${items.map((p) => p.recipient)}::text[])
      as k(execution_id, recipient)
      on m.execution_id = k.execution_id and m.recipient = k.recipient`;
  for (const r of rows) out.set(deliveryKey(r), r);
  return out;
}

/**
 * Charges each team for its new payable messages: the total in one statement (a ledger entry per
 * WhatsApp conversation opened, one for the rest), and only when the total does not fit, message by
 * message (so the balance never goes below zero). Answers the messages that could not be paid.
 */
async function chargeFor(tx: Db, fresh: Prepared[]): Promise<Set<Prepared>> {
  const unpaid = new Set<Prepared>();
  const byTeam = new Map<string, Prepared[]>();
  for (const p of fresh) {
    if (p.outcome || !p.message || p.sandbox || p.cost <= 0) continue;
    byTeam.set(p.team_id, [...byTeam.get(p.team_id) ?? [], p]);
  }
  for (const [teamId, list] of byTeam) {
    const reference = `trigger:${list[0].trigger_id}`;
    if (await chargeEach(tx, teamId, ledgerEntries(list, reference)) !== undefined) continue;
    for (const p of list) {
      const entry = ledgerEntry(p, reference);
      if (await charge(tx, teamId, entry.micros, reference, entry.description) === undefined) unpaid.add(p);
    }
  }
  return unpaid;
}

interface Update {
  p: Prepared;
  status: "sent" | "failed";
  error: string | null;
  cost: number;
  /** What to give back once the message is recorded failed. */
  refund: number;
  /** Its webhook event, emitted once it is recorded. */
  event: MessageOutcome;
  /** What the provider made of it (a sent one may carry its failover attempts: SentWith). */
  outcome: Outcome;
}

/**
 * Step 3: every outcome in one UPDATE (an answered message is no longer in a provider's hands).
 * Answers the updates that landed: a message another pass settled meanwhile is left as it is.
 */
async function updateStatuses(tx: Db, updates: Update[], now: number): Promise<Update[]> {
  if (updates.length === 0) return [];
  const sentAt = new Date(now).toISOString();
  const rows = await tx<{ execution_id: string; recipient: string }[]>`
    update messages m set status = v.status, provider_message_id = v.provider_message_id, error = v.error,
      cost_micros = v.cost, sent_at = case when v.status = 'sent' then ${sentAt}::timestamptz else null end,
      handed_at = null, ${withSentWith(tx)}
    from unnest(${updates.map((u) => u.p.execution_id)}::uuid[], ${updates.map((u) => u.p.recipient)}::text[],
      ${updates.map((u) => u.status)}::text[], ${updates.map((u) => providerId(u.outcome))}::text[],
      ${updates.map((u) => u.error)}::text[], ${updates.map((u) => u.cost)}::bigint[],
      ${updates.map((u) => sentAttempts(u.outcome))}::text[], ${updates.map((u) => sentProvider(u.outcome))}::text[])
      as v(execution_id, recipient, status, provider_message_id, error, cost, attempts, provider)
    where m.execution_id = v.execution_id and m.recipient = v.recipient and m.status = 'pending'
    returning m.execution_id, m.recipient`;
  const landed = new Set(rows.map(deliveryKey));
  return updates.filter((u) => landed.has(deliveryKey(u.p)));
}
