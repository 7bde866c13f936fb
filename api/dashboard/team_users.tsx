import type { Context } from "hono";
import { Hono } from "hono";
import type { DashboardUser } from "../../shared/dashboard_users.ts";
import type { Deps } from "../../shared/deps.ts";
import { type PeopleRefusal, removeTeamUser, setTeamUserRole } from "./account_queries.ts";
import type { DashboardEnv } from "./env.ts";
import { field } from "./form.ts";
import { BASE, CsrfField, MessagePage } from "./layout.tsx";
import { ownerOnly } from "./owner_only.tsx";
import type { SessionUser } from "./sessions.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An owner's buttons on another person of the team: their role, and removing them. */
export function PersonActions(props: { user: SessionUser; person: DashboardUser }) {
  const { user, person } = props;
  const other = person.role === "owner" ? "member" : "owner";
  return (
    <>
      <form method="post" action={`${BASE}/team/users/${person.id}/role`}>
        <CsrfField user={user} />
        <input type="hidden" name="role" value={other} />
        <button
          type="submit"
          class="quiet"
          aria-label={`Make ${person.email} ${other === "owner" ? "an owner" : "a member"}`}
        >
          Make {other}
        </button>
      </form>
      <form method="post" action={`${BASE}/team/users/${person.id}/remove`}>
        <CsrfField user={user} />
        <button type="submit" class="danger" aria-label={`Remove ${person.email}`}>Remove</button>
      </form>
    </>
  );
}

/** The answer to a refused change, or to the team's page after a done one. */
function answer(c: Context<DashboardEnv>, refusal: PeopleRefusal | undefined) {
  const user = c.get("user");
  if (refusal === "not_found") {
    const message = "Your team has no such person: they may have been removed already.";
    return c.html(<MessagePage title="Person not found" message={message} user={user} />, 404);
  }
  if (refusal === "last_owner") {
    const message = "A team keeps at least one owner: make someone else an owner first.";
    return c.html(<MessagePage title="The last owner stays" message={message} user={user} />, 409);
  }
  return c.redirect(`${BASE}/team`, 303);
}

/**
 * Owners change a person's role or remove them (their sessions end with the account). Not their own:
 * another owner does that, so that nobody locks themselves out by a slip.
 */
export function teamUserRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  app.use("/team/users/*", ownerOnly("manage the team's people"));

  const target = (c: Context<DashboardEnv>) => {
    const id = c.req.param("id") ?? "";
    return UUID.test(id) && id.toLowerCase() !== c.get("user").id ? id.toLowerCase() : undefined;
  };

  app.post("/team/users/:id/role", async (c) => {
    const id = target(c);
    const role = field(await c.req.parseBody(), "role");
    if (!id || (role !== "owner" && role !== "member")) return answer(c, "not_found");
    return answer(c, await setTeamUserRole(deps.sql, c.get("user").teamId, id, role));
  });

  app.post("/team/users/:id/remove", async (c) => {
    const id = target(c);
    if (!id) return answer(c, "not_found");
    return answer(c, await removeTeamUser(deps.sql, c.get("user").teamId, id));
  });

  return app;
}
