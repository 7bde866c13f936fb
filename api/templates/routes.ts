import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import type { Template } from "../../shared/templates.ts";
import { errors } from "../messages/schemas.ts";
import { jsonResponse } from "../../shared/http/schemas.ts";
import { TemplateList, TemplatesQuery } from "./schemas.ts";
import { tag } from "../../shared/http/openapi.ts";

const PLACEHOLDER = /\{\{\s*([\w.-]+)\s*\}\}/g;

/** The variables a template names, in order of first appearance. */
export function templateVariables(t: Template): string[] {
  const texts = [t.subject, t.html, t.text, t.title, t.body, ...Object.values(t.country_variations ?? {})];
  const names = texts.flatMap((text) => [...(text ?? "").matchAll(PLACEHOLDER)].map((m) => m[1]));
  return [...new Set(names)];
}

/**
 * Template look-up under /api/v1/templates (templates are managed in the dashboard / admin API): a
 * key's templates, or a page of all of them (`page`, `limit` up to 500) with the total.
 */
export function templatesRoutes(deps: Deps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags: tag("Templates"),
      summary: "Check a template key: the team's templates under it, one per channel",
      description:
        "Whether `template_key` resolves, and on which channels: the team's templates under the key, with their " +
        "approval status. Check before sending with a new key.",
      request: { query: TemplatesQuery },
      responses: { 200: jsonResponse(TemplateList, "The templates"), ...errors(400) },
    }),
    async (c) => {
      const { template_key: key, channel, page, limit } = c.req.valid("query");
      const teamId = c.get("team").id;
      const where = deps.sql`team_id = ${teamId}
        ${key === undefined ? deps.sql`` : deps.sql`and key = ${key}`}
        ${channel === undefined ? deps.sql`` : deps.sql`and channel = ${channel}`}`;
      const offset = (page - 1) * limit;
      const rows = await deps.sql<Template[]>`
        select * from templates where ${where} order by key, channel limit ${limit} offset ${offset}`;
      // A page that is not full, and not past the end, is the last: it gives the total (a key's look-up
      // always). Only a full page, or one past the end, needs the count.
      const total = rows.length < limit && (rows.length > 0 || offset === 0)
        ? offset + rows.length
        : (await deps.sql<[{ total: number }]>`select count(*)::int as total from templates where ${where}`)[0].total;
      const templates = rows.map((t) => ({
        id: t.id,
        key: t.key,
        template_key: t.key,
        channel: t.channel,
        status: t.status,
        category: t.category,
        subject: t.subject,
        html: t.html,
        text: t.text,
        title: t.title,
        body: t.body,
        country_variations: t.country_variations,
        variables: templateVariables(t),
        created_at: t.created_at,
        updated_at: t.updated_at,
      }));
      return c.json({
        template_key: key ?? null,
        exists: templates.length > 0,
        channels: [...new Set(templates.map((t) => t.channel))],
        templates,
        total,
        page,
        limit,
        totalPages: Math.ceil(total / limit),
      } as never, 200);
    },
  );
  return app;
}
