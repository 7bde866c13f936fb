import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { createDashboardUser } from "../../shared/dashboard_users.ts";
import { MAX_EMAIL_LENGTH } from "../../shared/email.ts";
import { newRouter } from "../../shared/http/app.ts";
import { jsonBody, jsonResponse, timestamp } from "../../shared/http/schemas.ts";
import { MIN_PASSWORD_LENGTH } from "../../shared/passwords.ts";
import { requireTeam } from "./queries.ts";
import { ADMIN, BadRequest, NotFound, TeamParam, Unauthorized } from "./schemas.ts";

/** `POST /teams/{team_id}/users` body. */
const CreateUserBody = z.strictObject({
  email: z.email().max(MAX_EMAIL_LENGTH),
  // The upper bound keeps one sign-in from hashing megabytes.
  password: z.string().min(MIN_PASSWORD_LENGTH).max(1024),
  role: z.enum(["owner", "member"]),
}).openapi("AdminCreateUser");

/** A dashboard user as the admin API shows it. */
const UserSchema = z.object({
  id: z.string(),
  email: z.string(),
  role: z.enum(["owner", "member"]),
  team_id: z.string(),
  created_at: timestamp,
}).openapi("AdminUser");

/** Dashboard users: the operator creates a team's first owner here; owners invite the rest. */
export function adminUserRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/teams/{team_id}/users",
      ...ADMIN,
      summary: "Create a dashboard user of a team (its first owner, typically)",
      description:
        "Creates a user who signs in at /dashboard with this email and password (at least 12 characters; stored only as an argon2id hash). `owner` may manage keys and users; `member` may not. An email already in use is 409.",
      request: { params: TeamParam, body: jsonBody(CreateUserBody) },
      responses: {
        201: jsonResponse(UserSchema, "The user (never its password)"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
        409: { ...NotFound, description: "A dashboard user with this email already exists" },
      },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const body = c.req.valid("json");
      const user = await createDashboardUser(deps.sql, { teamId: team.id, ...body });
      return c.json({ ...user, created_at: user.created_at.toISOString() }, 201);
    },
  );

  return app;
}
