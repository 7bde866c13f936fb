import type { Db } from "../shared/db.ts";
import {
  closeConversations,
  conversationCharge,
  type ConversationMessage,
  conversationNote,
  openConversations,
} from "../shared/sending/conversations.ts";
import type { ChargeEntry } from "../shared/wallet.ts";
import type { Prepared } from "./prepare.ts";

/** What WhatsApp conversation billing decided for the payable messages of a delivery pass. */
export interface ConversationBilling {
  /** Messages inside an open conversation, not charged: the note each records (which message opened it). */
  free: Map<Prepared, string>;
  /** Of the free ones, those riding on a conversation a message of this pass opens, with that message. */
  riding: Map<Prepared, Prepared>;
}

/** The conversation of a message charged per WhatsApp conversation, if it is one. */
function conversationOf(p: Prepared): ConversationMessage | undefined {
  if (p.channel !== "whatsapp" || !p.conversation_category || !p.to_address || p.cost <= 0) return undefined;
  return {
    team_id: p.team_id,
    phone: p.to_address,
    category: p.conversation_category,
    message_id: p.id,
    at: p.held_until,
  };
}

/**
 * Opens or finds the conversation of each payable WhatsApp message of a pass (one statement, in the
 * pass's recording transaction): a message that opens one is charged as usual; one inside an open
 * conversation is free. Other channels are left as they are.
 */
export async function billConversations(tx: Db, payable: Prepared[], now: number): Promise<ConversationBilling> {
  const billing: ConversationBilling = { free: new Map(), riding: new Map() };
  const inConversation = payable.filter((p) => conversationOf(p));
  if (inConversation.length === 0) return billing;
  const openers = await openConversations(tx, inConversation.map((p) => conversationOf(p)!), now);
  const byId = new Map(inConversation.map((p) => [p.id, p]));
  for (const p of inConversation) {
    const opener = openers.get(p.id)!;
    if (opener === p.id) continue;
    billing.free.set(p, conversationNote(p.conversation_category!, opener));
    const fellow = byId.get(opener);
    if (fellow) billing.riding.set(p, fellow);
  }
  return billing;
}

/**
 * The wallet ledger entries of a team's charged messages: one per WhatsApp conversation opened,
 * naming the message that opened it; the others in one entry, as before conversations were billed.
 */
export function ledgerEntries(charged: Prepared[], reference: string): ChargeEntry[] {
  const entries: ChargeEntry[] = [];
  const rest: Prepared[] = [];
  for (const p of charged) {
    if (conversationOf(p)) entries.push(ledgerEntry(p, reference));
    else rest.push(p);
  }
  if (rest.length > 0) {
    const micros = rest.reduce((sum, p) => sum + p.cost, 0);
    const description = `${rest.length} ${rest[0].channel} message${rest.length === 1 ? "" : "s"}`;
    entries.unshift({ micros, reference, description });
  }
  return entries;
}

/** The ledger entry of one charged message (when the wallet cannot pay a whole pass at once). */
export function ledgerEntry(p: Prepared, reference: string): ChargeEntry {
  const description = conversationOf(p) ? conversationCharge(p.conversation_category!, p.id) : `1 ${p.channel} message`;
  return { micros: p.cost, reference, description };
}

/**
 * Settles the conversations of messages the wallet could not pay: a conversation they opened is
 * closed (it stands only on a charge), and the messages of the pass riding on it are not paid either
 * (added to `unpaid`, their note cleared): they fail with the same reason.
 */
export async function conversationsUnpaid(tx: Db, billing: ConversationBilling, unpaid: Set<Prepared>): Promise<void> {
  const opened = [...unpaid].map(conversationOf).filter((m) => m !== undefined);
  if (opened.length === 0) return;
  await closeConversations(tx, opened);
  const riders = [...billing.riding].filter(([, opener]) => unpaid.has(opener)).map(([p]) => p);
  if (riders.length === 0) return;
  for (const p of riders) unpaid.add(p);
  // Their note said they were free inside the conversation: it no longer holds.
  await tx`update messages set note = null where id = any(${riders.map((p) => p.id)})`;
}

/** Closes the conversations opened by messages refunded after the provider refused them. */
export async function conversationsRefunded(tx: Db, refunded: { p: Prepared; messageId: string }[]): Promise<void> {
  const opened = refunded.map(({ p, messageId }) => conversationOf({ ...p, id: messageId }))
    .filter((m) => m !== undefined);
  await closeConversations(tx, opened);
}
