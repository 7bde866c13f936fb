import type { Db } from "../db.ts";
import { type ContactRow, duplicateContactError, type NewContact, newContactRow } from "./queries.ts";

/** A contact of the batch that was not created because it already exists. */
export interface SkippedContact {
  email: string;
  external_id: string | null;
  reason: string;
}

/** The outcome of a bulk creation (invalid entries are the caller's to report). */
export interface BulkResult {
  created: ContactRow[];
  skipped: SkippedContact[];
}

/**
 * Creates many contacts with ONE multi-row `insert … on conflict do nothing returning *`. Entries
 * whose email or external id already exists in the team, or repeats an earlier entry of the batch,
 * are skipped with the reason (the 409 message a single create would give).
 */
export async function createContacts(db: Db, teamId: string, inputs: NewContact[]): Promise<BulkResult> {
  const skipped: SkippedContact[] = [];
  const emails = new Set<string>();
  const externalIds = new Set<string>();
  const rows = [];
  const inputOf = new Map<string, NewContact>();
  for (const input of inputs) {
    const row = newContactRow(teamId, input);
    const email = row.email.toLowerCase();
    if (emails.has(email) || externalIds.has(row.external_id)) {
      const constraint = emails.has(email) ? "contacts_team_email" : "contacts_team_external_id";
      skipped.push(skip(input, duplicateContactError(constraint, row).message));
      continue;
    }
    emails.add(email);
    externalIds.add(row.external_id);
    inputOf.set(email, input);
    rows.push(row);
  }
  if (rows.length === 0) return { created: [], skipped };
  const created: ContactRow[] = await db`
    insert into contacts ${db(rows)}
    on conflict do nothing
    returning *`;
  if (created.length < rows.length) {
    const done = new Set(created.map((c) => c.email.toLowerCase()));
    const missed = rows.filter((r) => !done.has(r.email.toLowerCase()));
    const existing: { email: string }[] = await db`
      select lower(email) as email from contacts
      where team_id = ${teamId} and lower(email) = any(${missed.map((r) => r.email.toLowerCase())}::text[])`;
    const taken = new Set(existing.map((e) => e.email));
    for (const row of missed) {
      const constraint = taken.has(row.email.toLowerCase()) ? "contacts_team_email" : "contacts_team_external_id";
      const input = inputOf.get(row.email.toLowerCase()) ?? row;
      skipped.push(skip(input, duplicateContactError(constraint, row).message));
    }
  }
  return { created, skipped };
}

function skip(input: { email: string; external_id?: string }, reason: string): SkippedContact {
  return { email: input.email, external_id: input.external_id ?? null, reason };
}
