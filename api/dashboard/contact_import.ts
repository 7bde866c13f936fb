import { parse } from "csv-parse/sync";
import { createContacts } from "../../shared/contacts/bulk.ts";
import type { NewContact } from "../../shared/contacts/queries.ts";
import type postgres from "postgres";
import type { Db, Sql } from "../../shared/db.ts";
import type { Deps } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import { CreateContactBody } from "../contacts/schemas.ts";

/** Rows created in one transaction: what an interrupted import may have to redo at most. */
export const IMPORT_CHUNK = 500;

/** An import not worked on for this long was left by a process that stopped: the next look resumes it. */
export const STALE_IMPORT_MS = 30_000;

/** The columns a file may have besides custom fields (a header is matched without case or spaces). */
export const KNOWN_COLUMNS = ["email", "phone", "first_name", "last_name", "external_id", "tags"] as const;

/** A CSV row: validated like a contact of the API's bulk creation, minus device tokens and preferences. */
const ImportedContact = CreateContactBody.omit({ fcm_token: true, apns_token: true, preferences: true });

/** A row left out, numbered as a spreadsheet shows it (the header is row 1). */
export interface SkippedRow {
  row: number;
  email: string;
  reason: string;
}

/** An import as its page shows it. */
export interface ContactImport {
  id: string;
  team_id: string;
  file_name: string;
  status: "running" | "done" | "failed";
  total_rows: number;
  next_row: number;
  created_count: number;
  skipped: SkippedRow[];
  error: string | null;
  created_at: Date;
  heartbeat_at: Date;
  finished_at: Date | null;
}

const IMPORT_COLUMNS = [
  "id",
  "team_id",
  "file_name",
  "status",
  "total_rows",
  "next_row",
  "created_count",
  "skipped",
  "error",
  "created_at",
  "heartbeat_at",
  "finished_at",
];

/** A header cell as a column name: `First Name` → `first_name`. */
function columnName(header: string): string {
  return header.trim().toLowerCase().replace(/[\s-]+/g, "_");
}

/** The file's data rows as records keyed by column name; a file that is not CSV is a ValidationError. */
export function parseContactsCsv(text: string): Record<string, string>[] {
  try {
    return parse(text, {
      columns: (headers: string[]) => headers.map(columnName),
      bom: true,
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
    }) as Record<string, string>[];
  } catch (err) {
    throw new ValidationError([`The file is not a CSV file we can read: ${(err as Error).message}`]);
  }
}

/** A row as a new contact, or the reason it cannot be one. */
export function contactOfRow(record: Record<string, string>): { contact: NewContact } | { reason: string } {
  const custom: Record<string, string> = {};
  for (const [key, value] of Object.entries(record)) {
    if (!(KNOWN_COLUMNS as readonly string[]).includes(key) && key !== "" && value !== "") custom[key] = value;
  }
  const tags = (record.tags ?? "").split(/[,;|]/).map((t) => t.trim()).filter(Boolean);
  const input = {
    email: record.email ?? "",
    ...(record.external_id ? { external_id: record.external_id } : {}),
    ...(record.first_name ? { first_name: record.first_name } : {}),
    ...(record.last_name ? { last_name: record.last_name } : {}),
    ...(record.phone ? { phone: record.phone } : {}),
    ...(tags.length > 0 ? { tags: [...new Set(tags)] } : {}),
    ...(Object.keys(custom).length > 0 ? { custom_fields: custom } : {}),
  };
  const parsed = ImportedContact.safeParse(input);
  if (parsed.success) return { contact: { ...parsed.data, metadata: { created_via: "dashboard_import" } } };
  const issue = parsed.error.issues[0];
  const where = issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
  return { reason: `${where}${issue.message}` };
}

/** Records an upload as an import to run; its id. */
export async function createImport(
  db: Db,
  teamId: string,
  upload: { userId: string; fileName: string; csv: string; totalRows: number },
): Promise<string> {
  const [row]: [{ id: string }] = await db`
    insert into contact_imports (team_id, user_id, file_name, csv, total_rows, status, finished_at)
    values (${teamId}, ${upload.userId}, ${upload.fileName}, ${upload.csv}, ${upload.totalRows},
      ${upload.totalRows === 0 ? "done" : "running"}, ${upload.totalRows === 0 ? new Date() : null})
    returning id`;
  return row.id;
}

/** The team's import with this id (another team's is undefined). */
export async function findImport(db: Db, teamId: string, id: string): Promise<ContactImport | undefined> {
  if (!/^[0-9a-f-]{36}$/i.test(id)) return undefined;
  const [row]: [ContactImport?] = await db`
    select ${db(IMPORT_COLUMNS)} from contact_imports where id = ${id}::uuid and team_id = ${teamId}`;
  return row;
}

/** The team's latest imports, newest first. */
export async function recentImports(db: Db, teamId: string, limit = 5): Promise<ContactImport[]> {
  return await db<ContactImport[]>`
    select ${db(IMPORT_COLUMNS)} from contact_imports where team_id = ${teamId}
    order by created_at desc limit ${limit}`;
}

/** Imports this process is working on (an import is never run twice at once by one process). */
const running = new Map<string, Promise<void>>();

/**
 * Runs an import to its end in the background, chunk by chunk; a running one is left alone. Resolves
 * when it is done (callers need not wait: the page polls).
 */
export function runImport(deps: Deps, teamId: string, id: string): Promise<void> {
  const current = running.get(id);
  if (current) return current;
  const work = importChunks(deps.sql, teamId, id)
    .catch(async (err) => {
      log("error", "contact import failed", { import_id: id, team_id: teamId, error: String(err) });
      await deps.sql`
        update contact_imports set status = 'failed', error = ${"The import stopped on an error of ours."},
          finished_at = now()
        where id = ${id}::uuid and status = 'running'`;
    })
    .finally(() => running.delete(id));
  running.set(id, work);
  return work;
}

/** Resumes an import another process left running when it stopped (nobody has touched it for a while). */
export function resumeIfStale(deps: Deps, imp: ContactImport): void {
  if (imp.status !== "running" || running.has(imp.id)) return;
  if (deps.now() - imp.heartbeat_at.getTime() < STALE_IMPORT_MS) return;
  log("info", "contact import resumed", { import_id: imp.id, team_id: imp.team_id, next_row: imp.next_row });
  void runImport(deps, imp.team_id, imp.id);
}

async function importChunks(sql: Sql, teamId: string, id: string): Promise<void> {
  const [row]: [{ csv: string; next_row: number; status: string }?] = await sql`
    select csv, next_row, status from contact_imports where id = ${id}::uuid and team_id = ${teamId}`;
  if (!row || row.status !== "running") return;
  const records = parseContactsCsv(row.csv);
  let start = row.next_row;
  while (start < records.length) {
    const end = Math.min(start + IMPORT_CHUNK, records.length);
    if (!await importChunk(sql, teamId, id, records, start, end)) return;
    start = end;
  }
}

/**
 * Creates the contacts of rows [start, end) and moves the import past them in ONE transaction: a stop
 * at any point leaves either both or neither. False when another worker has moved it on already.
 */
async function importChunk(
  sql: Sql,
  teamId: string,
  id: string,
  records: Record<string, string>[],
  start: number,
  end: number,
): Promise<boolean> {
  return await sql.begin(async (tx) => {
    const [current]: [{ next_row: number }?] = await tx`
      select next_row from contact_imports where id = ${id}::uuid and status = 'running' for update`;
    if (!current || current.next_row !== start) return false;
    const skipped: SkippedRow[] = [];
    const valid: NewContact[] = [];
    const rowsOf = new Map<string, number[]>();
    for (let i = start; i < end; i++) {
      const row = i + 2;
      const outcome = contactOfRow(records[i]);
      if ("reason" in outcome) {
        skipped.push({ row, email: records[i].email ?? "", reason: outcome.reason });
        continue;
      }
      valid.push(outcome.contact);
      const email = outcome.contact.email.toLowerCase();
      rowsOf.set(email, [...rowsOf.get(email) ?? [], row]);
    }
    const result = await createContacts(tx, teamId, valid);
    for (const s of result.skipped) {
      // Of rows sharing an email, the first went to the database and later ones repeat it; a skip of
      // the batch's own repeats comes first, one of the database's after.
      const rows = rowsOf.get(s.email.toLowerCase()) ?? [0];
      const row = rows.length > 1 ? rows.pop()! : rows[0];
      skipped.push({ row, email: s.email, reason: s.reason });
    }
    skipped.sort((a, b) => a.row - b.row);
    const done = end >= records.length;
    await tx`
      update contact_imports set
        next_row = ${end},
        created_count = created_count + ${result.created.length},
        skipped = skipped || ${tx.json(skipped as unknown as postgres.JSONValue)},
        heartbeat_at = now(),
        status = ${done ? "done" : "running"},
        finished_at = ${done ? new Date() : null},
        csv = ${done ? "" : tx`csv`}
      where id = ${id}::uuid`;
    return true;
  });
}
