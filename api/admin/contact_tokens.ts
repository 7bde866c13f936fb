import { createRoute, z } from "@hono/zod-openapi";
import { CONTACT_TOKEN_HEADER, newContactTokenSecret } from "../../shared/contact_tokens.ts";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import { jsonResponse } from "../../shared/http/schemas.ts";
import { contactTokenSecret, setContactTokenSecret } from "../../shared/teams.ts";
import { requireTeam } from "./queries.ts";
import { ADMIN, NotFound, TeamParam, Unauthorized } from "./schemas.ts";

const State = z.object({ enabled: z.boolean() }).openapi("AdminContactTokens");
const Enabled = State.extend({
  secret: z.string().openapi({ description: "HMAC key of the contact tokens; shown only here" }),
  header: z.literal(CONTACT_TOKEN_HEADER),
}).openapi("AdminContactTokensEnabled");

/**
 * Contact tokens of a team (docs/contact-tokens.md): while on, every publishable-key request about a
 * contact must carry X-Contact-Token, HMAC-SHA256 of its external id under the team's secret.
 */
export function adminContactTokenRoutes(deps: Deps) {
  const app = newRouter();
  const path = "/teams/{team_id}/contact-tokens";
  const request = { params: TeamParam };

  app.openapi(
    createRoute({
      method: "post",
      path,
      ...ADMIN,
      summary: "Require contact tokens with a new secret (replacing any former one at once)",
      description:
        "From now on every publishable-key request about a contact must carry X-Contact-Token, the HMAC-SHA256 of the contact's external id under this secret (docs/contact-tokens.md). The secret is shown once; calling again rotates it, and tokens made with the former secret stop working at once.",
      request,
      responses: { 201: jsonResponse(Enabled, "On, with the new secret"), 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const secret = newContactTokenSecret();
      await setContactTokenSecret(deps.sql, team.id, secret);
      return c.json({ enabled: true, secret, header: CONTACT_TOKEN_HEADER } as const, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path,
      ...ADMIN,
      summary: "Whether the team requires contact tokens",
      description:
        "Answers `enabled`: whether publishable-key requests of the team must carry X-Contact-Token. The secret itself is never shown again.",
      request,
      responses: { 200: jsonResponse(State, "On or off"), 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      return c.json({ enabled: await contactTokenSecret(deps.sql, team.id) !== null }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path,
      ...ADMIN,
      summary: "Stop requiring contact tokens (the secret is forgotten)",
      description:
        "Publishable-key requests no longer need X-Contact-Token, and the secret is deleted: turning tokens on again makes a new one.",
      request,
      responses: { 200: jsonResponse(State, "Off"), 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      await setContactTokenSecret(deps.sql, team.id, null);
      return c.json({ enabled: false }, 200);
    },
  );

  return app;
}
