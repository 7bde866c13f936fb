import type { Db } from "../../shared/db.ts";
import { type DeliveryState, REACHED_STATES } from "../../shared/delivery_reports.ts";

/** A contact whose preferences a callback changed. */
export interface ChangedContact {
  id: string;
  external_id: string;
}

/**
 * A STOP (`subscribed` false) turns both categories (transactional, promotional) of `channel` off for
 * the team's contacts whose `custom_fields.phone` has the same digits as `phone`; a START turns the
 * transactional one on again and leaves promotional as it is: a START is no consent to marketing
 * (which is off by default), and the contact's earlier marketing consent went with the STOP. Only
 * contacts whose preferences change are returned (a repeated STOP changes nothing and returns none).
 */
export async function setChannelSubscriptionByPhone(
  db: Db,
  teamId: string,
  phone: string,
  channel: "sms" | "whatsapp",
  subscribed: boolean,
): Promise<ChangedContact[]> {
  const digits = phone.replace(/\D/g, "");
  if (digits === "") return [];
  const change = subscribed
    ? db`jsonb_build_object('transactional', true)`
    : db`jsonb_build_object('transactional', false, 'promotional', false)`;
  return await db<ChangedContact[]>`
    update contacts
    set preferences = preferences || jsonb_build_object(
      ${channel}::text, coalesce(preferences -> ${channel}::text, '{}'::jsonb) || ${change}
    ), updated_at = now()
    where team_id = ${teamId}
      and custom_fields ? 'phone'
      and regexp_replace(custom_fields ->> 'phone', '[^0-9]', '', 'g') = ${digits}
      and (
        coalesce((preferences -> ${channel}::text ->> 'transactional')::boolean, true) <> ${subscribed}
        or (not ${subscribed} and coalesce((preferences -> ${channel}::text ->> 'promotional')::boolean, true))
      )
    returning id, external_id`;
}

/** Turns off one email category of a contact (after a spam complaint); the contact when it changed. */
export async function unsubscribeEmailPromotional(
  db: Db,
  teamId: string,
  contactId: string,
): Promise<ChangedContact | undefined> {
  const [row]: [ChangedContact?] = await db`
    update contacts
    set preferences = preferences || jsonb_build_object(
      'email', coalesce(preferences -> 'email', '{}'::jsonb) || '{"promotional": false}'::jsonb
    ), updated_at = now()
    where team_id = ${teamId} and id = ${contactId}
      and coalesce((preferences -> 'email' ->> 'promotional')::boolean, true)
    returning id, external_id`;
  return row;
}

/** A message whose delivery state changed. */
export interface ChangedMessage {
  id: string;
  team_id: string;
  trigger_id: string;
  execution_id: string;
  channel: string;
  contact_id: string | null;
  delivery_status: DeliveryState;
}

/**
 * Records a provider's delivery report on the message with this provider id. States only move
 * forward (delivered → read; failed only before delivery; a complaint after delivery), so
 * callbacks arriving late or twice change nothing and return undefined.
 */
export async function recordDeliveryState(
  db: Db,
  providerMessageId: string,
  state: DeliveryState,
  error?: string,
): Promise<ChangedMessage | undefined> {
  const allowedFrom = {
    delivered: ["failed"],
    read: ["delivered", "failed"],
    failed: [],
    complained: ["delivered", "read"],
  }[state];
  const [row]: [ChangedMessage?] = await db`
    update messages set
      delivery_status = ${state},
      delivered_at = case when ${state} = any(${REACHED_STATES}::text[]) then coalesce(delivered_at, now())
        else delivered_at end,
      read_at = case when ${state} = 'read' then coalesce(read_at, now()) else read_at end,
      error = case when ${state} = 'failed' then coalesce(${error ?? null}, error) else error end
    where provider_message_id = ${providerMessageId} and provider <> 'outbox'
      and (delivery_status is null or delivery_status = any(${allowedFrom}::text[]))
    returning id, team_id, trigger_id, execution_id, channel, contact_id, delivery_status`;
  return row;
}
