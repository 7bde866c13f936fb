import { isDomainName, isEmail } from "../../shared/email.ts";
import { createRoute } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { setDomainVerified, upsertIdentity } from "../../shared/identities.ts";
import { upsertSegment } from "../../shared/segments.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { requireTeam } from "./queries.ts";
import {
  ADMIN,
  BadRequest,
  ChannelSchema,
  DomainBody,
  DomainSchema,
  IdentityBody,
  IdentitySchema,
  NotFound,
  SegmentBody,
  SegmentSchema,
  TeamParam,
  TemplateBodies,
  TemplateSchema,
  Unauthorized,
} from "./schemas.ts";
import { jsonBody, jsonResponse, RecordKey } from "../../shared/http/schemas.ts";

const CHANNELS = ["email", "sms", "whatsapp", "push"] as const;
const name = (param: string) => RecordKey.min(1).openapi({ param: { name: param, in: "path" } });

/** What a team sends with: templates, sender identities, email domains and segments. */
export function adminSetupRoutes(deps: Deps) {
  const app = newRouter();

  // One route per channel, so that each channel's body is validated (and documented) on its own.
  for (const channel of CHANNELS) {
    app.openapi(
      createRoute({
        method: "put",
        path: `/teams/{team_id}/templates/${channel}/{key}`,
        ...ADMIN,
        summary: `Create or replace the ${channel} template of a key`,
        description:
          "Sets the team's template for this channel under `key`; sends name it by `template_key`. Variables are " +
          "written `{{name}}` (WhatsApp: `{{1}}`, `{{2}}`).",
        request: { params: TeamParam.extend({ key: name("key") }), body: jsonBody(TemplateBodies[channel]) },
        responses: {
          200: jsonResponse(TemplateSchema, "The template (its id is stable across upserts)"),
          400: BadRequest,
          401: Unauthorized,
          404: NotFound,
        },
      }),
      async (c) => {
        const { team_id, key } = c.req.valid("param");
        const team = await requireTeam(deps.sql, team_id);
        return c.json(await upsertTemplate(deps.sql, team.id, channel, key, c.req.valid("json")), 200);
      },
    );
  }
  // Not a route of the document: names the valid channels instead of answering 'Cannot PUT'.
  app.put("/teams/:team_id/templates/:channel/:key", () => {
    throw new ValidationError([`channel must be one of: ${CHANNELS.join(", ")}`]);
  });

  app.openapi(
    createRoute({
      method: "put",
      path: "/teams/{team_id}/identities/{channel}/{identity_id}",
      ...ADMIN,
      summary: "Create or replace a sender identity",
      description:
        "A sender per channel: an email address and name, an SMS sender id or number per countries, a WhatsApp " +
        "number, a push app. `is_default` makes it the channel's default.",
      request: {
        params: TeamParam.extend({ channel: ChannelSchema, identity_id: name("identity_id") }),
        body: jsonBody(IdentityBody),
      },
      responses: {
        200: jsonResponse(IdentitySchema, "The identity"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
      },
    }),
    async (c) => {
      const { team_id, channel, identity_id } = c.req.valid("param");
      const body = c.req.valid("json");
      if (channel === "email" && !isEmail(body.from)) throw new ValidationError(["from must be an email"]);
      const team = await requireTeam(deps.sql, team_id);
      const { from_address, ...identity } = await upsertIdentity(deps.sql, team.id, channel, identity_id, body);
      return c.json({ ...identity, from: from_address }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/teams/{team_id}/domains/{domain}",
      ...ADMIN,
      summary: "Mark an email domain verified (or not)",
      description: "Email can be sent from addresses on verified domains only.",
      request: { params: TeamParam.extend({ domain: name("domain") }), body: jsonBody(DomainBody) },
      responses: { 200: jsonResponse(DomainSchema, "The domain"), 400: BadRequest, 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const { team_id, domain } = c.req.valid("param");
      if (!isDomainName(domain)) throw new ValidationError(["domain must be a domain name"]);
      const team = await requireTeam(deps.sql, team_id);
      const { verified } = c.req.valid("json");
      await setDomainVerified(deps.sql, team.id, domain, verified);
      return c.json({ domain: domain.toLowerCase(), verified }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/teams/{team_id}/segments/{segment_id}",
      ...ADMIN,
      summary: "Create or replace a segment (a stored contact filter)",
      description:
        "A stored contact filter (tags all, tags any, active) that push and multi-channel sends can name with " +
        "`segment_id`.",
      request: { params: TeamParam.extend({ segment_id: name("segment_id") }), body: jsonBody(SegmentBody) },
      responses: {
        200: jsonResponse(SegmentSchema, "The segment"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
      },
    }),
    async (c) => {
      const { team_id, segment_id } = c.req.valid("param");
      const team = await requireTeam(deps.sql, team_id);
      return c.json(await upsertSegment(deps.sql, team.id, segment_id, c.req.valid("json")), 200);
    },
  );

  return app;
}
