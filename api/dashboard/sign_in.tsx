import type { Context } from "hono";
import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { MAX_EMAIL_LENGTH } from "../../shared/email.ts";
import { verifyNobody, verifyPassword } from "../../shared/passwords.ts";
import { clientIp } from "../../otp/limits.ts";
import { field } from "./form.ts";
import { BASE, MessagePage, Page } from "./layout.tsx";
import { findUserByEmail } from "./queries.ts";
import { createSession, findSession, sessionToken, setSessionCookie } from "./sessions.ts";
import { countSignInFailure, signInLockedUntil } from "./throttle.ts";

function SignInPage(props: { error?: string; email?: string }) {
  return (
    <Page title="Sign in">
      <section class="card narrow" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to the dashboard</h1>
        {props.error && <p class="alert card" role="alert" id="sign-in-error">{props.error}</p>}
        <form method="post" action={`${BASE}/sign-in`}>
          <div class="field">
            <label for="email">Email</label>
            <input
              id="email"
              name="email"
              type="email"
              autocomplete="username"
              required
              value={props.email ?? ""}
              autofocus
              aria-describedby={props.error ? "sign-in-error" : undefined}
            />
          </div>
          <div class="field">
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" required />
          </div>
          <button type="submit">Sign in</button>
        </form>
        <p class="muted">
          No account yet? The operator creates a team's first owner with the admin API; owners invite the rest.
        </p>
      </section>
    </Page>
  );
}

/** What a locked account or address is told: when it may try again. */
export function tooManyMessage(until: number, now: number): string {
  const minutes = Math.ceil((until - now) / 60_000);
  const at = new Date(until).toISOString().slice(11, 16);
  return `Too many failed sign-ins. Try again in ${minutes} minutes (after ${at} UTC).`;
}

function tooMany(c: Context, until: number, now: number): Promise<Response> | Response {
  c.header("Retry-After", String(Math.ceil((until - now) / 1000)));
  return c.html(<MessagePage title="Too many sign-in attempts" message={tooManyMessage(until, now)} />, 429);
}

/** The sign-in page and its form: a session cookie on success, throttled failures per account and IP. */
export function signInRoutes(deps: Deps) {
  const app = new Hono<AppEnv>();

  app.get("/sign-in", async (c) => {
    const token = sessionToken(c, deps);
    if (token && await findSession(deps.sql, token, deps.now())) return c.redirect(`${BASE}/keys`, 303);
    return c.html(<SignInPage />);
  });

  app.post("/sign-in", async (c) => {
    const form = await c.req.parseBody();
    const email = field(form, "email").trim();
    const password = field(form, "password");
    if (!email || !password || email.length > MAX_EMAIL_LENGTH || password.length > 1024) {
      return c.html(<SignInPage error="Enter your email and password." email={email.slice(0, 254)} />, 400);
    }
    const now = deps.now();
    const ip = clientIp(c, deps.config.TRUST_PROXY);
    const until = await signInLockedUntil(deps, email, ip, now);
    if (until) return tooMany(c, until, now);
    const user = await findUserByEmail(deps.sql, email);
    const ok = user ? await verifyPassword(password, user.password_hash) : await verifyNobody(password);
    if (!user || !ok) {
      await countSignInFailure(deps, email, ip, now);
      return c.html(<SignInPage error="That email and password do not match an account." email={email} />, 401);
    }
    const token = await createSession(deps.sql, user.id, c.req.header("user-agent"), now);
    setSessionCookie(c, deps, token);
    return c.redirect(`${BASE}/keys`, 303);
  });

  return app;
}
