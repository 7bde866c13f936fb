import type { Db } from "../shared/db.ts";
import {
  closeConversations,
  conversationCharge,
  type ConversationMessage,
  openConversations,
} from "../shared/sending/conversations.ts";
import type { PlannedMessage } from "./delivery.ts";

/** The conversation a charged OTP WhatsApp message belongs to (codes are AUTHENTICATION messages). */
function conversationOf(teamId: string, plan: PlannedMessage): ConversationMessage | undefined {
  if (plan.channel !== "whatsapp" || plan.cost <= 0) return undefined;
  return { team_id: teamId, phone: plan.to, category: "AUTHENTICATION", message_id: plan.id };
}

/**
 * Opens or finds the WhatsApp AUTHENTICATION conversation of a request's WhatsApp code (in the
 * transaction that charges the request): inside an open conversation its delivery costs nothing
 * (its `cost` becomes 0; the verification fee is still paid). Answers the description of the
 * conversation it opens, for the ledger, if it opens one.
 */
export async function openOtpConversation(
  tx: Db,
  teamId: string,
  plans: PlannedMessage[],
  now: number,
): Promise<string | undefined> {
  const messages = plans.map((p) => conversationOf(teamId, p)).filter((m) => m !== undefined);
  if (messages.length === 0) return undefined;
  const openers = await openConversations(tx, messages, now);
  let opened: string | undefined;
  for (const plan of plans) {
    const opener = openers.get(plan.id);
    if (opener === undefined) continue;
    if (opener === plan.id) opened = conversationCharge("AUTHENTICATION", plan.id);
    else plan.cost = 0;
  }
  return opened;
}

/** Closes the conversations these messages opened: they were refunded or not paid (see closeConversations). */
export async function closeOtpConversations(db: Db, teamId: string, plans: PlannedMessage[]): Promise<void> {
  await closeConversations(db, plans.map((p) => conversationOf(teamId, p)).filter((m) => m !== undefined));
}
