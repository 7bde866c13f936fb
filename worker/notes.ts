import type { Db } from "../shared/db.ts";

/** What a recorded message missed or carries (messages.missing_variables, messages.note). */
export interface Noted {
  trigger_id: string;
  missing_variables: string | null;
  note: string | null;
}

/**
 * Counts the notes of messages a pass records, in its transaction: one row per trigger and note
 * (migration 030), so that a trigger's warnings are read from a few rows, not from its messages.
 */
export async function countNotes(tx: Db, messages: Noted[]): Promise<void> {
  const counts = new Map<string, Noted & { n: number }>();
  for (const m of messages) {
    if (m.missing_variables === null && m.note === null) continue;
    // U+0001 stands for null: neither a variable name ([A-Za-z0-9_.-]) nor a note holds it.
    const key = `${m.trigger_id}\0${m.missing_variables ?? "\u0001"}\0${m.note ?? "\u0001"}`;
    const count = counts.get(key);
    if (count) count.n++;
    else counts.set(key, { ...m, n: 1 });
  }
  if (counts.size === 0) return;
  const rows = [...counts.values()];
  await tx`
    insert into trigger_notes (trigger_id, missing_variables, note, n)
    select * from unnest(${rows.map((r) => r.trigger_id)}::uuid[], ${rows.map((r) => r.missing_variables)}::text[],
      ${rows.map((r) => r.note)}::text[], ${rows.map((r) => r.n)}::int[])`;
}
