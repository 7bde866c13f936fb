import { Hono } from "hono";
import { z } from "zod";
import type { Deps } from "../../shared/deps.ts";
import { createDashboardUser, type DashboardUser, generatePassword } from "../../shared/dashboard_users.ts";
import { MAX_EMAIL_LENGTH } from "../../shared/email.ts";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { BASE, CsrfField, Page, When } from "./layout.tsx";
import { ownerOnly } from "./owner_only.tsx";
import { PersonActions } from "./team_users.tsx";
import { listTeamUsers } from "./queries.ts";
import type { SessionUser } from "./sessions.ts";

const Invite = z.object({ email: z.email().max(MAX_EMAIL_LENGTH), role: z.enum(["owner", "member"]) });

/** What the page says after an invitation: the new user's password (shown once), or why it failed. */
type Outcome = { invited: { email: string; password: string } } | { error: string };

function UserTable(props: { users: DashboardUser[]; user: SessionUser }) {
  return (
    <Table headings={["Email", "Role", "Added"]} actions>
      {props.users.map((u) => (
        <tr key={u.id}>
          <td data-label="Email">{u.email}</td>
          <td data-label="Role">{u.role}</td>
          <td data-label="Added">
            <When at={u.created_at} />
          </td>
          <td class="actions">{u.id !== props.user.id && <PersonActions user={props.user} person={u} />}</td>
        </tr>
      ))}
    </Table>
  );
}

function InviteForm(props: { user: SessionUser }) {
  return (
    <section class="card" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite someone</h2>
      <p class="muted">
        They get an account with a password shown to you once: hand it to them privately.
      </p>
      <form method="post" action={`${BASE}/team`} class="row">
        <CsrfField user={props.user} />
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" autocomplete="off" required />
        </div>
        <div class="field">
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role">
            <option value="member">Member (sees the team's data)</option>
            <option value="owner">Owner (also manages keys and people)</option>
          </select>
        </div>
        <button type="submit">Invite</button>
      </form>
    </section>
  );
}

function TeamPage(props: { user: SessionUser; users: DashboardUser[]; outcome?: Outcome }) {
  const { outcome } = props;
  return (
    <Page title="Team" user={props.user} active="team">
      <h1>Team</h1>
      {outcome && "invited" in outcome && (
        <section class="card notice" role="status" aria-labelledby="invited-title">
          <h2 id="invited-title">{outcome.invited.email} can now sign in</h2>
          <p>Their password, shown only this once:</p>
          <code class="secret" id="new-password">{outcome.invited.password}</code>
        </section>
      )}
      {outcome && "error" in outcome && <p class="card alert" role="alert">{outcome.error}</p>}
      <section class="card" aria-labelledby="people-title">
        <h2 id="people-title">People</h2>
        {props.users.length > 1 ? <UserTable users={props.users} user={props.user} /> : (
          <>
            <UserTable users={props.users} user={props.user} />
            <p class="empty">You are the only one here so far. Invite a teammate below.</p>
          </>
        )}
      </section>
      <InviteForm user={props.user} />
    </Page>
  );
}

/** The team page (owners only): the team's people, and invitations that create an account. */
export function teamRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  app.use("/team", ownerOnly("manage the team's people"));

  app.get("/team", async (c) => {
    const user = c.get("user");
    return c.html(<TeamPage user={user} users={await listTeamUsers(deps.sql, user.teamId)} />);
  });

  app.post("/team", async (c) => {
    const user = c.get("user");
    const invite = Invite.safeParse(await c.req.parseBody());
    if (!invite.success) {
      const users = await listTeamUsers(deps.sql, user.teamId);
      const outcome = { error: "Enter the email address of the person to invite, and a role." };
      return c.html(<TeamPage user={user} users={users} outcome={outcome} />, 400);
    }
    const password = generatePassword();
    await createDashboardUser(deps.sql, { teamId: user.teamId, ...invite.data, password });
    const users = await listTeamUsers(deps.sql, user.teamId);
    const outcome = { invited: { email: invite.data.email, password } };
    return c.html(<TeamPage user={user} users={users} outcome={outcome} />, 201);
  });

  return app;
}
