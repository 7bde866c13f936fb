import { asJson, type Db } from "../db.ts";
import { ConflictError } from "../errors.ts";
import { isUniqueViolation } from "../errors.ts";
import type { Channel } from "../providers/types.ts";

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

/**
 * Creates a contact (external id generated as `auto_gen_<uuid>` when omitted). A duplicate email or
 * external id is a ConflictError with the specification's message.
 */
export async function createContact(db: Db, teamId: string, input: NewContact): Promise<ContactRow> {
  const row = {
    team_id: teamId,
    email: input.email,
    external_id: input.external_id ?? `auto_gen_${crypto.randomUUID()}`,
    first_name: input.first_name ?? null,
    last_name: input.last_name ?? null,
    tags: input.tags ?? [],
    is_active: input.is_active ?? true,
    custom_fields: asJson(input.custom_fields ?? {}),
    metadata: asJson(input.metadata ?? {}),
  };
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
