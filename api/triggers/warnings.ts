import type { Db } from "../../shared/db.ts";
import { missingVariablesWarning } from "../../shared/sending/render.ts";

/** What a sender should know of a trigger's messages, though they were sent: absent when nothing. */
export interface TriggerWarnings {
  /** Template variables that had no value and rendered empty, in any of its messages. */
  missing_variables?: string[];
  /** The same, and any other note on its messages (kept in the outbox for want of a provider …), in words. */
  warnings?: string[];
}

/**
 * The warnings of a trigger's recorded messages (missing template variables, notes; migration 014),
 * from the counts each delivery pass kept of them (migration 030, worker/notes.ts).
 */
export async function triggerWarnings(db: Db, triggerId: string): Promise<TriggerWarnings> {
  const rows = await db<{ missing_variables: string | null; note: string | null; n: number }[]>`
    select missing_variables, note, sum(n)::int as n from trigger_notes
    where trigger_id = ${triggerId}
    group by missing_variables, note`;
  if (rows.length === 0) return {};
  const missing = new Set<string>();
  let withMissing = 0;
  const notes = new Map<string, number>();
  for (const row of rows) {
    if (row.missing_variables !== null) {
      for (const name of row.missing_variables.split(",")) missing.add(name);
      withMissing += row.n;
    }
    if (row.note !== null) notes.set(row.note, (notes.get(row.note) ?? 0) + row.n);
  }
  const warnings: string[] = [];
  const names = [...missing].sort();
  if (names.length > 0) warnings.push(`${missingVariablesWarning(names)} (${count(withMissing)})`);
  for (const [note, n] of notes) warnings.push(`${note} (${count(n)})`);
  return names.length > 0 ? { missing_variables: names, warnings } : { warnings };
}

function count(n: number): string {
  return n === 1 ? "1 message" : `${n} messages`;
}
