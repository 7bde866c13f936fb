import type { Db } from "../db.ts";
import type { WhatsAppContent } from "./spec.ts";

/** A WhatsApp conversation category (the price of a conversation depends on it). */
export type ConversationCategory = WhatsAppContent["conversation_category"];

/** How long a WhatsApp conversation lasts once its first message is charged. */
export const CONVERSATION_MS = 24 * 60 * 60 * 1000;

/** A WhatsApp message about to be charged: the conversation it belongs to, and its own id. */
export interface ConversationMessage {
  team_id: string;
  /** The E.164 number the message goes to. */
  phone: string;
  category: ConversationCategory;
  message_id: string;
  /**
   * When it goes out, if not at once: a message held for quiet hours opens its conversation at the
   * hold's end, since that is when WhatsApp opens it (and the 24 hours run from then).
   */
  at?: number;
}

/** The key of a conversation: (team, number, category). */
export function conversationKey(m: { team_id: string; phone: string; category: string }): string {
  return `${m.team_id}\0${m.phone}\0${m.category}`;
}

/**
 * Finds or opens the conversation of each message, in one statement, and answers for each message id
 * the id of the message that opened its conversation: its own when it opens one (and is to be
 * charged), another one's when a conversation of its category to its number is open (it is free).
 * Of several messages of the batch to one conversation, the first opens it. A conversation that has
 * expired is taken over. Runs in the transaction that charges the openers: a concurrent pass to the
 * same number waits on the conversation's row until that transaction ends, then sees the open
 * conversation, so exactly one of them opens it (rows are locked in key order: no deadlock between
 * passes; callers take these locks before the wallet's).
 */
export async function openConversations(
  tx: Db,
  messages: ConversationMessage[],
  now: number,
): Promise<Map<string, string>> {
  const openers = new Map<string, string>();
  if (messages.length === 0) return openers;
  // Every conflicting row is updated (to itself while it is open), so that RETURNING answers the
  // opener of every conversation in this one statement.
  const rows = await tx<{ team_id: string; phone: string; category: string; opened_by_message_id: string }[]>`
    insert into whatsapp_conversations as w (team_id, phone, category, opened_at, expires_at, opened_by_message_id)
    select team_id, phone, category, opened_at, opened_at + ${CONVERSATION_MS} * interval '1 millisecond', message_id
    from (
      select distinct on (team_id, phone, category) team_id, phone, category, message_id, opened_at
      from unnest(${messages.map((m) => m.team_id)}::uuid[], ${messages.map((m) => m.phone)}::text[],
        ${messages.map((m) => m.category)}::text[], ${messages.map((m) => m.message_id)}::text[],
        ${messages.map((m) => new Date(Math.max(m.at ?? now, now)).toISOString())}::timestamptz[])
        with ordinality as c(team_id, phone, category, message_id, opened_at, ord)
      order by team_id, phone, category, ord
    ) first
    order by team_id, phone, category
    on conflict (team_id, phone, category) do update set
      opened_at = case when w.expires_at <= excluded.opened_at then excluded.opened_at else w.opened_at end,
      expires_at = case when w.expires_at <= excluded.opened_at then excluded.expires_at else w.expires_at end,
      opened_by_message_id = case when w.expires_at <= excluded.opened_at
        then excluded.opened_by_message_id else w.opened_by_message_id end
    returning team_id, phone, category, opened_by_message_id`;
  const byKey = new Map(rows.map((r) => [conversationKey(r), r.opened_by_message_id]));
  for (const m of messages) openers.set(m.message_id, byKey.get(conversationKey(m))!);
  return openers;
}

/**
 * A message that may have opened a conversation, as closeConversations finds it: its category may be
 * unknown (the messages table does not hold it); its id alone names the conversation it opened.
 */
export type ConversationOpener = Omit<ConversationMessage, "category"> & { category?: ConversationCategory };

/**
 * Closes the conversations these messages opened: the opening message was refunded (the provider
 * refused it, or it was held and not sent) or could not be paid, and a conversation stands only on a
 * charge. The next message of the category to the number opens a new one. A conversation another
 * message has opened since is left alone. Rows are taken in key order, as openConversations takes
 * them; callers take these locks before the wallet's, as openConversations does.
 */
export async function closeConversations(tx: Db, openers: ConversationOpener[]): Promise<void> {
  if (openers.length === 0) return;
  const key = (m: ConversationOpener) => conversationKey({ ...m, category: m.category ?? "" });
  const sorted = openers.toSorted((a, b) => key(a) < key(b) ? -1 : 1);
  await tx`
    delete from whatsapp_conversations w
    using unnest(${sorted.map((m) => m.team_id)}::uuid[], ${sorted.map((m) => m.phone)}::text[],
      ${sorted.map((m) => m.category ?? null)}::text[], ${sorted.map((m) => m.message_id)}::text[])
      as c(team_id, phone, category, message_id)
    where w.team_id = c.team_id and w.phone = c.phone and (c.category is null or w.category = c.category)
      and w.opened_by_message_id = c.message_id`;
}

/** What the wallet ledger says of a conversation's charge: the message that opened it. */
export function conversationCharge(category: ConversationCategory, messageId: string): string {
  return `WhatsApp ${category} conversation opened by message ${messageId}`;
}

/** What a message sent inside an open conversation records: why it cost nothing. */
export function conversationNote(category: ConversationCategory, openerId: string): string {
  return `Inside the WhatsApp ${category} conversation opened by message ${openerId}: not charged`;
}
