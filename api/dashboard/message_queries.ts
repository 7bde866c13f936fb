import type postgres from "postgres";
import type { Db } from "../../shared/db.ts";
import type { Attempt } from "../../shared/providers/failover.ts";

/** A message as the activity log lists it. */
export interface MessageListRow {
  id: string;
  channel: string;
  status: string;
  delivery_status: string | null;
  to_address: string | null;
  contact_id: string | null;
  trigger_id: string;
  cost_micros: number;
  created_at: Date;
}

/** What the activity log may be narrowed by; every filter is exact. */
export interface MessageFilters {
  channel?: string;
  status?: string;
  /** An address as sent to, or a contact's email or external id (its messages then). */
  recipient?: string;
  /** The template key the message was made from (migration 022). */
  template?: string;
  triggerId?: string;
  /** The messages recorded for this contact (messages_contact). */
  contactId?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
}

/** One page of a keyset list: the rows, and the id to start the next page after (null on the last). */
export interface KeysetPage<T> {
  rows: T[];
  next: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const LIST_COLUMNS = [
  "id",
  "channel",
  "status",
  "delivery_status",
  "to_address",
  "contact_id",
  "trigger_id",
  "cost_micros",
  "created_at",
];

function where(db: Db, teamId: string, f: MessageFilters): postgres.Fragment {
  const recipient = f.recipient?.trim();
  return db`team_id = ${teamId}
    ${f.channel ? db`and channel = ${f.channel}` : db``}
    ${f.status ? statusMatch(db, f.status) : db``}
    ${recipient ? recipientMatch(db, teamId, recipient) : db``}
    ${f.template ? db`and template_key = ${f.template}` : db``}
    ${f.triggerId ? (UUID.test(f.triggerId) ? db`and trigger_id = ${f.triggerId}::uuid` : db`and false`) : db``}
    ${f.contactId ? db`and contact_id = ${f.contactId}` : db``}
    ${f.from ? db`and created_at >= ${f.from}` : db``}
    ${f.to ? db`and created_at < ${f.to}` : db``}`;
}

/** A status is the pipeline's (pending, sent, failed, filtered) or a provider's report (delivered, read …). */
function statusMatch(db: Db, status: string): postgres.Fragment {
  return ["pending", "sent", "failed", "filtered"].includes(status)
    ? db`and status = ${status}`
    : db`and delivery_status = ${status}`;
}

/**
 * The messages to an address, and those of the contact that email or external id names (a fan-out
 * records the contact; a direct send only the address).
 */
function recipientMatch(db: Db, teamId: string, recipient: string): postgres.Fragment {
  return db`and (to_address = ${recipient} or contact_id in (
    select id from contacts where team_id = ${teamId}
      and (lower(email) = lower(${recipient}) or external_id = ${recipient})
  ))`;
}

/**
 * A page of the team's messages, newest first by keyset on (created_at, id) after the message
 * `after` (served by messages_team_created, migration 022: a deep page costs what the first does).
 */
export async function listMessages(
  db: Db,
  teamId: string,
  options: { limit: number; after?: string; filters?: MessageFilters },
): Promise<KeysetPage<MessageListRow>> {
  const { limit, after } = options;
  const rows: MessageListRow[] = await db`
    select ${db(LIST_COLUMNS)} from messages
    where ${where(db, teamId, options.filters ?? {})}
    ${
    after
      ? db`and (created_at, id) < (select created_at, id from messages where id = ${after} and team_id = ${teamId})`
      : db``
  }
    order by created_at desc, id desc
    limit ${limit + 1}`;
  return keysetPage(rows, limit);
}

/** The first `limit` rows, and the id to go on after when there were more. */
export function keysetPage<T extends { id: string }>(rows: T[], limit: number): KeysetPage<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return { rows: kept, next: more ? kept[kept.length - 1].id : null };
}

/** A message with everything its page shows. */
export interface MessageDetail extends MessageListRow {
  execution_id: string;
  recipient: string;
  provider: string | null;
  provider_message_id: string | null;
  error: string | null;
  note: string | null;
  missing_variables: string | null;
  sent_at: Date | null;
  delivered_at: Date | null;
  read_at: Date | null;
  in_outbox: boolean;
  outbox_subject: string | null;
  outbox_body: string | null;
  /** The recorded request's content for this message's channel (template key, subject …), if kept. */
  content: Record<string, unknown> | null;
  template_key: string | null;
  sandbox: boolean | null;
  /** Its hand-overs to the team's channel accounts (failover), null when it went the default way. */
  attempts: Attempt[] | null;
}

/** The team's message with this id; undefined for another team's or an unknown one. */
export async function findMessage(db: Db, teamId: string, id: string): Promise<MessageDetail | undefined> {
  const [row]: [MessageDetail?] = await db`
    select m.id, m.channel, m.status, m.delivery_status, m.to_address, m.contact_id, m.trigger_id,
      m.cost_micros, m.created_at, m.execution_id, m.recipient, m.provider, m.provider_message_id, m.error,
      m.note, m.missing_variables, m.sent_at, m.delivered_at, m.read_at, m.in_outbox, m.outbox_subject,
      m.outbox_body, m.template_key, m.attempts, t.sandbox,
      (select e -> 'content' from jsonb_array_elements(t.spec -> 'executions') e
        where e ->> 'id' = m.execution_id::text limit 1) as content
    from messages m left join triggers t on t.id = m.trigger_id and t.team_id = m.team_id
    where m.id = ${id} and m.team_id = ${teamId}`;
  return row;
}
