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

/** Every channel's template under one key. */
export async function findTemplatesByKey(db: Db, teamId: string, key: string): Promise<Template[]> {
  return await db<Template[]>`select * from templates where team_id = ${teamId} and key = ${key} order by channel`;
}

/** A rendered text and the variables it named that had no value. */
export interface Rendered {
  text: string;
  missing: string[];
}

const PLACEHOLDER = /\{\{\s*([\w.-]+)\s*\}\}/g;

/** Replaces `{{name}}` (and WhatsApp's `{{1}}`) from `variables`; a missing one renders empty. */
export function render(text: string, variables: Record<string, unknown>): Rendered {
  const missing: string[] = [];
  const out = text.replace(PLACEHOLDER, (_, name: string) => {
    const value = variables[name];
    if (value === undefined || value === null) {
      missing.push(name);
      return "";
    }
    return typeof value === "object" ? JSON.stringify(value) : String(value);
  });
  return { text: out, missing };
}
