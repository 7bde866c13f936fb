import type postgres from "postgres";
import { asJson, type Db, type Sql } from "../db.ts";
import { ConflictError } from "../errors.ts";
import { isUniqueViolation } from "../errors.ts";
import type { Channel } from "../providers/types.ts";
import { overDefaults, type PreferencesInput } from "./preference_defaults.ts";

/** A contact's subscription per (channel, category). */
export type Preferences = Record<Channel, { transactional: boolean; promotional: boolean }>;

/** A contact row as stored. */
export interface ContactRow {
  id: string;
  team_id: string;
  external_id: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  tags: string[];
  is_active: boolean;
  is_unsubscribed: boolean;
  unsubscribed_at: Date | null;
  custom_fields: Record<string, unknown>;
  metadata: Record<string, unknown>;
  preferences: Preferences;
  created_at: Date;
  updated_at: Date;
}

/** What creating a contact takes. */
export interface NewContact {
  email: string;
  external_id?: string;
  first_name?: string | null;
  last_name?: string | null;
  tags?: string[];
  is_active?: boolean;
  custom_fields?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** E.164: kept as `custom_fields.phone`, where SMS and WhatsApp sends read it. */
  phone?: string;
  /** Applied over the defaults. */
  preferences?: PreferencesInput;
}

/** The team's contact with this external id. */
export async function findContactByExternalId(
  db: Db,
  teamId: string,
  externalId: string,
): Promise<ContactRow | undefined> {
  const [row]: [ContactRow?] =
    await db`select * from contacts where team_id = ${teamId} and external_id = ${externalId}`;
  return row;
}

/** The team's contact with this email (case-insensitive). */
export async function findContactByEmail(db: Db, teamId: string, email: string): Promise<ContactRow | undefined> {
  const [row]: [ContactRow?] =
    await db`select * from contacts where team_id = ${teamId} and lower(email) = lower(${email})`;
  return row;
}

/** The row to insert for a new contact: defaults filled, external id generated as `auto_gen_<uuid>` when omitted. */
export function newContactRow(teamId: string, input: NewContact) {
  return {
    team_id: teamId,
    email: input.email,
    external_id: input.external_id ?? `auto_gen_${crypto.randomUUID()}`,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    tags: input.tags ?? [],
    is_active: input.is_active ?? true,
    custom_fields: asJson(withPhone(input.custom_fields ?? {}, input.phone)),
    metadata: asJson(input.metadata ?? {}),
    preferences: asJson(overDefaults(input.preferences)),
  };
}

/** Custom fields with `phone` set (a top-level phone wins over one inside them), or removed for null. */
function withPhone(fields: Record<string, unknown>, phone: string | null | undefined): Record<string, unknown> {
  if (phone === undefined) return fields;
  const { phone: _, ...rest } = fields;
  return phone === null ? rest : { ...rest, phone };
}

/**
 * Creates a contact (external id generated as `auto_gen_<uuid>` when omitted). A duplicate email or
 * external id is a ConflictError with the specification's message.
 */
export async function createContact(db: Db, teamId: string, input: NewContact): Promise<ContactRow> {
  const row = newContactRow(teamId, input);
  try {
    const [contact]: [ContactRow] = await db`insert into contacts ${db(row)} returning *`;
    return contact;
  } catch (err) {
    if (isUniqueViolation(err)) throw duplicateContactError(err.constraint_name, row);
    throw err;
  }
}

/** The 409 for a unique violation on contacts. */
export function duplicateContactError(
  constraint: string | undefined,
  row: { email: string; external_id: string },
): ConflictError {
  return constraint === "contacts_team_external_id"
    ? new ConflictError(`You already have a contact with external_id ${row.external_id}`, "duplicate_external_id")
    : new ConflictError(`You already have a contact with email ${row.email}`, "duplicate_email");
}

/**
 * How a route names a contact: `id` is the contact's UUID, tried as an external id when no contact
 * has that id (or when it is not a UUID); `external_id` is the external id only.
 */
export interface ContactRef {
  by: "id" | "external_id";
  value: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID in its canonical text form (anything else never reaches a `uuid` cast). */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** WHERE condition selecting the team's one contact named by `ref` (a non-UUID never meets a uuid cast). */
export function contactMatch(db: Db, teamId: string, ref: ContactRef): postgres.Fragment {
  if (ref.by === "external_id" || !isUuid(ref.value)) {
    return db`team_id = ${teamId} and external_id = ${ref.value}`;
  }
  return db`team_id = ${teamId} and id = (
    select id from contacts
    where team_id = ${teamId} and (id = ${ref.value}::uuid or external_id = ${ref.value})
    order by id = ${ref.value}::uuid desc
    limit 1
  )`;
}

/**
 * The team's contact named by `ref`: a UUID is looked up by primary key first (the common case, and
 * the cheapest statement), and only when no contact has that id is it tried as an external id.
 */
export async function findContact(db: Db, teamId: string, ref: ContactRef): Promise<ContactRow | undefined> {
  if (ref.by === "external_id" || !isUuid(ref.value)) return await findContactByExternalId(db, teamId, ref.value);
  const [row]: [ContactRow?] = await db`select * from contacts where id = ${ref.value}::uuid and team_id = ${teamId}`;
  return row ?? await findContactByExternalId(db, teamId, ref.value);
}

/** The fields an update may change; only those given change. */
export interface ContactChanges {
  email?: string;
  external_id?: string;
  first_name?: string | null;
  last_name?: string | null;
  tags?: string[];
  is_active?: boolean;
  /** true sets `unsubscribed_at` (kept when already set); false clears it. */
  is_unsubscribed?: boolean;
  custom_fields?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
  /** E.164 to set as `custom_fields.phone`; null removes it. */
  phone?: string | null;
}

const CHANGEABLE = [
  "email",
  "external_id",
  "first_name",
  "last_name",
  "tags",
  "is_active",
  "is_unsubscribed",
  "custom_fields",
  "metadata",
] as const;

/** Changes the given fields of the contact named by `ref`; undefined when there is none. 409 on a duplicate. */
export async function updateContact(
  db: Db,
  teamId: string,
  ref: ContactRef,
  changes: ContactChanges,
): Promise<ContactRow | undefined> {
  const fields: Record<string, postgres.ParameterOrJSON<never>> = {};
  for (const column of CHANGEABLE) {
    const value = changes[column];
    if (value === undefined) continue;
    fields[column] = column === "custom_fields"
      ? asJson(withPhone(value as Record<string, unknown>, changes.phone))
      : column === "metadata"
      ? asJson(value)
      : value as postgres.ParameterOrJSON<never>;
  }
  const columns = Object.keys(fields);
  // A phone without custom fields changes only that key of the stored ones.
  const phone = changes.phone === undefined || changes.custom_fields !== undefined
    ? db``
    : changes.phone === null
    ? db`, custom_fields = custom_fields - 'phone'`
    : db`, custom_fields = custom_fields || ${db.json({ phone: changes.phone })}`;
  const unsubscribedAt = changes.is_unsubscribed === undefined
    ? db``
    : changes.is_unsubscribed
    ? db`, unsubscribed_at = coalesce(unsubscribed_at, now())`
    : db`, unsubscribed_at = null`;
  // The column helper must follow `set` in its own template to render as assignments.
  const update = columns.length > 0
    ? db`update contacts set ${db(fields, columns)}, updated_at = now()`
    : db`update contacts set updated_at = now()`;
  try {
    const [row]: [ContactRow?] = await db`
      ${update} ${unsubscribedAt} ${phone}
      where ${contactMatch(db, teamId, ref)}
      returning *`;
    return row;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw duplicateContactError(err.constraint_name, {
        email: changes.email ?? "",
        external_id: changes.external_id ?? "",
      });
    }
    throw err;
  }
}

/**
 * Deletes the contact named by `ref` (permanently) and anonymizes its message history, in one
 * transaction; its id, or undefined when there is none.
 */
export async function deleteContact(db: Sql, teamId: string, ref: ContactRef): Promise<string | undefined> {
  return await db.begin(async (tx) => {
    const [row]: [{ id: string }?] = await tx`
      delete from contacts where ${contactMatch(tx, teamId, ref)} returning id`;
    if (row) await anonymizeMessages(tx, teamId, row.id);
    return row?.id;
  });
}

/** What a deleted contact's messages show where they showed its address. */
export const DELETED_ADDRESS = "[deleted]";

/**
 * Keeps a deleted contact's messages (statuses, costs, provider ids, counts) without what named it:
 * the address (also where an error quotes it), the device token in a push message's delivery key,
 * and the outbox copy's address, subject and body. A delivery key only has to be unique within its
 * execution, and the contact can no longer be sent to, so the message's own id stands in for it.
 */
async function anonymizeMessages(tx: Db, teamId: string, contactId: string): Promise<void> {
  // Copies kept apart: those written before migration 011, and any OutboxProvider.send wrote.
  await tx`
    update outbox set to_address = ${DELETED_ADDRESS}, subject = null, body = null
    where id in (select id from messages where contact_id = ${contactId} and team_id = ${teamId})`;
  // A message row's address goes, so its outbox copy (migration 011) becomes an entry of its own.
  await tx`
    insert into outbox (id, team_id, channel, to_address, trigger_id, created_at)
    select id, team_id, channel, ${DELETED_ADDRESS}, trigger_id, created_at from messages
    where contact_id = ${contactId} and team_id = ${teamId} and in_outbox`;
  await tx`
    update messages set
      in_outbox = false, outbox_subject = null, outbox_body = null,
      to_address = null,
      recipient = ${contactId}::text || ':' || id,
      error = case when to_address is null or to_address = '' then error
        else replace(error, to_address, ${DELETED_ADDRESS}) end
    where contact_id = ${contactId} and team_id = ${teamId}`;
}

/** Adds tags the contact does not carry yet, keeping the order of first appearance. */
export async function addTags(
  db: Db,
  teamId: string,
  ref: ContactRef,
  tags: string[],
): Promise<ContactRow | undefined> {
  const [row]: [ContactRow?] = await db`
    update contacts
    set tags = array(
      select t from unnest(tags || ${tags}::text[]) with ordinality as u(t, n) group by t order by min(n)
    ), updated_at = now()
    where ${contactMatch(db, teamId, ref)}
    returning *`;
  return row;
}

/** Removes the given tags from the contact. */
export async function removeTags(
  db: Db,
  teamId: string,
  ref: ContactRef,
  tags: string[],
): Promise<ContactRow | undefined> {
  const [row]: [ContactRow?] = await db`
    update contacts
    set tags = array(
      select t from unnest(tags) with ordinality as u(t, n) where t <> all(${tags}::text[]) order by n
    ), updated_at = now()
    where ${contactMatch(db, teamId, ref)}
    returning *`;
  return row;
}
