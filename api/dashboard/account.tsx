import type { Context } from "hono";
import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { MIN_PASSWORD_LENGTH, verifyPassword } from "../../shared/passwords.ts";
import { clientIp } from "../../otp/limits.ts";
import {
  changePassword,
  deleteUserSession,
  listUserSessions,
  passwordHashOf,
  type SessionRow,
} from "./account_queries.ts";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { field } from "./form.ts";
import { BASE, CsrfField, MessagePage, Page, When } from "./layout.tsx";
import { clearSessionCookie, type SessionUser } from "./sessions.ts";
import { tooManyMessage } from "./sign_in.tsx";
import { countSignInFailure, signInLockedUntil } from "./throttle.ts";

/** What the page says at the top after a form. */
type Outcome = { changed: true } | { signedOut: true } | { error: string };

function SessionTable(props: { user: SessionUser; sessions: SessionRow[] }) {
  return (
    <Table headings={["Browser", "Signed in", "Last seen"]} caption="Your sessions" actions>
      {props.sessions.map((s) => (
        <tr key={s.id} data-session={s.id}>
          <td data-label="Browser">
            {s.user_agent ?? <span class="muted">unknown</span>} {s.current && <strong>(this session)</strong>}
          </td>
          <td data-label="Signed in">
            <When at={s.created_at} />
          </td>
          <td data-label="Last seen">
            <When at={s.last_seen_at} />
          </td>
          <td class="actions">
            <form method="post" action={`${BASE}/account/sessions/${s.id}/sign-out`}>
              <CsrfField user={props.user} />
              <button type="submit" class="quiet" aria-label={`Sign out session ${s.id}`}>Sign out</button>
            </form>
          </td>
        </tr>
      ))}
    </Table>
  );
}

function AccountPage(props: { user: SessionUser; sessions: SessionRow[]; outcome?: Outcome }) {
  const { user, outcome } = props;
  return (
    <Page title="Your account" user={user}>
      <h1>Your account</h1>
      {outcome && "changed" in outcome && (
        <p class="card notice" role="status" id="account-notice">
          Your password is changed. Your other sessions are signed out.
        </p>
      )}
      {outcome && "signedOut" in outcome && (
        <p class="card notice" role="status" id="account-notice">That session is signed out.</p>
      )}
      {outcome && "error" in outcome && <p class="card alert" role="alert" id="account-error">{outcome.error}</p>}
      <section class="card" aria-labelledby="password-title">
        <h2 id="password-title">Change your password</h2>
        <form method="post" action={`${BASE}/account/password`}>
          <CsrfField user={user} />
          <input type="text" name="username" autocomplete="username" value={user.email} hidden />
          <div class="field">
            <label for="current-password">Current password</label>
            <input id="current-password" name="current" type="password" autocomplete="current-password" required />
          </div>
          <div class="field">
            <label for="new-password">New password (at least {MIN_PASSWORD_LENGTH} characters)</label>
            <input
              id="new-password"
              name="password"
              type="password"
              autocomplete="new-password"
              minlength={MIN_PASSWORD_LENGTH}
              required
            />
          </div>
          <button type="submit">Change password</button>
        </form>
      </section>
      <section class="card" aria-labelledby="sessions-title">
        <h2 id="sessions-title">Where you are signed in</h2>
        <SessionTable user={user} sessions={props.sessions} />
        <form method="post" action={`${BASE}/sign-out-everywhere`}>
          <CsrfField user={user} />
          <button type="submit" class="danger">Sign out everywhere</button>
        </form>
      </section>
    </Page>
  );
}

/** Your own account: change the password (throttled as sign-in is), see and end your sessions. */
export function accountPageRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  const page = async (c: Context<DashboardEnv>, outcome?: Outcome, status: 200 | 400 | 401 = 200) => {
    const user = c.get("user");
    const sessions = await listUserSessions(deps.sql, user.id, c.get("sessionToken"), deps.now());
    return c.html(<AccountPage user={user} sessions={sessions} outcome={outcome} />, status);
  };

  app.get("/account", (c) => page(c));

  app.post("/account/password", async (c) => {
    const user = c.get("user");
    const form = await c.req.parseBody();
    const current = field(form, "current");
    const password = field(form, "password");
    if (password.length < MIN_PASSWORD_LENGTH || password.length > 1024 || current.length > 1024) {
      return await page(c, { error: `The new password must be ${MIN_PASSWORD_LENGTH} to 1024 characters long.` }, 400);
    }
    // Guessing the current password here is guessing it at sign-in: the same limit, the same count.
    const now = deps.now();
    // clientIp reads only the request's headers and address, which every context has.
    const ip = clientIp(c as unknown as Context<AppEnv>, deps.config.TRUST_PROXY);
    const until = await signInLockedUntil(deps, user.email, ip, now);
    if (until) {
      c.header("Retry-After", String(Math.ceil((until - now) / 1000)));
      return c.html(<MessagePage title="Too many attempts" message={tooManyMessage(until, now)} user={user} />, 429);
    }
    const hash = await passwordHashOf(deps.sql, user.id);
    if (!hash || !await verifyPassword(current, hash)) {
      await countSignInFailure(deps, user.email, ip, now);
      return await page(c, { error: "That is not your current password. Nothing was changed." }, 401);
    }
    await changePassword(deps.sql, user.id, password, c.get("sessionToken"));
    return await page(c, { changed: true });
  });

  app.post("/account/sessions/:id/sign-out", async (c) => {
    const user = c.get("user");
    const sessions = await listUserSessions(deps.sql, user.id, c.get("sessionToken"), deps.now());
    const id = c.req.param("id");
    const ending = sessions.find((s) => s.id === id);
    if (!ending || !await deleteUserSession(deps.sql, user.id, id)) {
      const message = "You have no session with that id: it may have ended already.";
      return c.html(<MessagePage title="Session not found" message={message} user={user} />, 404);
    }
    if (ending.current) {
      clearSessionCookie(c, deps);
      return c.redirect(`${BASE}/sign-in`, 303);
    }
    return await page(c, { signedOut: true });
  });

  return app;
}
