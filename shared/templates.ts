import { sendSetupChanges } from "./changes.ts";
import type { Db } from "./db.ts";
import type { Channel } from "./providers/types.ts";

/** A stored template of one channel under one key. */
export interface Template {
  id: string;
  team_id: string;
  channel: Channel;
  key: string;
  subject: string | null;
  html: string | null;
  text: string | null;
  title: string | null;
  body: string | null;
  category: "MARKETING" | "UTILITY" | "AUTHENTICATION" | null;
  country_variations: Record<string, string> | null;
  status: "approved" | "pending" | "rejected";
  created_at: Date;
  updated_at: Date;
}

/** The fields a template upsert may set (per channel, validated by the admin API). */
export type TemplateInput = Partial<
  Pick<Template, "subject" | "html" | "text" | "title" | "body" | "category" | "country_variations" | "status">
>;

const COLUMNS = ["subject", "html", "text", "title", "body", "category", "country_variations", "status"] as const;

/** Creates or replaces the template of `channel` under `key`; its id stays the same across upserts. */
export async function upsertTemplate(
  db: Db,
  teamId: string,
  channel: Channel,
  key: string,
  input: TemplateInput,
): Promise<Template> {
  const row = {
    team_id: teamId,
    channel,
    key,
    subject: input.subject ?? null,
    html: input.html ?? null,
    text: input.text ?? null,
    title: input.title ?? null,
    body: input.body ?? null,
    category: input.category ?? null,
    country_variations: input.country_variations ?? null,
    status: input.status ?? "approved",
  };
  const [template]: [Template] = await db`
    insert into templates ${db(row)}
    on conflict (team_id, channel, key) do update set
      ${db(row, ...COLUMNS)}, updated_at = now()
    returning *`;
  sendSetupChanges.note();
  return template;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The team's template of `channel` named by key (or by id). */
export async function findTemplate(
  db: Db,
  teamId: string,
  channel: Channel,
  keyOrId: string,
): Promise<Template | undefined> {
  const [template]: [Template?] = UUID.test(keyOrId)
    ? await db`select * from templates where team_id = ${teamId} and channel = ${channel} and (id = ${keyOrId} or key = ${keyOrId})`
    : await db`select * from templates where team_id = ${teamId} and channel = ${channel} and key = ${keyOrId}`;
  return template;
}

/** Deletes the team's template of `channel` with this id; whether there was one. */
export async function deleteTemplate(db: Db, teamId: string, channel: Channel, id: string): Promise<boolean> {
  if (!UUID.test(id)) return false;
  const rows =
    await db`delete from templates where team_id = ${teamId} and channel = ${channel} and id = ${id} returning id`;
  if (rows.length > 0) sendSetupChanges.note();
  return rows.length > 0;
}

/** The team's templates of one channel, by key. */
export async function listTemplates(db: Db, teamId: string, channel: Channel): Promise<Template[]> {
  return await db<Template[]>`
    select * from templates where team_id = ${teamId} and channel = ${channel} order by key`;
}

/** Every channel's template under one key. */
export async function findTemplatesByKey(db: Db, teamId: string, key: string): Promise<Template[]> {
  return await db<Template[]>`select * from templates where team_id = ${teamId} and key = ${key} order by channel`;
}

/** A rendered text and the variables it named that had no value. */
export interface Rendered {
  text: string;
  missing: string[];
  /** The text would be over MAX_RENDERED_CHARS: `text` is cut short and must not be sent. */
  tooLarge?: boolean;
}

const PLACEHOLDER = /\{\{\s*([\w.-]+)\s*\}\}/g;

/**
 * The most characters a rendered text may have. Placeholders multiply a request: `{{x}}` a thousand
 * times with a 100 KB `x` made a 100 MB email that stalled the process for most of a minute.
 */
export const MAX_RENDERED_CHARS = 1_000_000;

/**
 * Replaces `{{name}}` (and WhatsApp's `{{1}}`) from `variables`' own properties (never inherited ones
 * such as `constructor`); a missing one renders empty. Stops filling once the text would be over
 * MAX_RENDERED_CHARS, and says so.
 */
export function render(text: string, variables: Record<string, unknown>): Rendered {
  const missing: string[] = [];
  const values = new Map<string, string>();
  let length = text.length;
  let tooLarge = length > MAX_RENDERED_CHARS;
  const out = text.replace(PLACEHOLDER, (placeholder: string, name: string) => {
    if (tooLarge) return "";
    let value = values.get(name);
    if (value === undefined) {
      const raw = Object.hasOwn(variables, name) ? variables[name] : undefined;
      if (raw === undefined || raw === null) {
        missing.push(name);
        return "";
      }
      value = typeof raw === "object" ? JSON.stringify(raw) : String(raw);
      values.set(name, value);
    }
    length += value.length - placeholder.length;
    if (length > MAX_RENDERED_CHARS) {
      tooLarge = true;
      return "";
    }
    return value;
  });
  return tooLarge ? { text: out, missing, tooLarge } : { text: out, missing };
}
