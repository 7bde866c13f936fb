import { Hono } from "hono";
import type { Context, Next } from "hono";
import { HTTPException } from "hono/http-exception";
import type { Deps } from "../../shared/deps.ts";
import { AppError } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import {
  CSS_PATH,
  cssResponse,
  PREVIEW_SCRIPT_PATH,
  previewScriptResponse,
  PROGRESS_SCRIPT_PATH,
  progressScriptResponse,
} from "./assets.ts";
import { csrfTokenMatches, sameOriginPosts } from "./csrf.ts";
import type { DashboardEnv } from "./env.ts";
import { accountRoutes } from "./account_routes.ts";
import { contactsRoutes } from "./contacts.tsx";
import { importRoutes } from "./imports.tsx";
import { keysRoutes } from "./keys.tsx";
import { messagesRoutes } from "./messages.tsx";
import { BASE, MessagePage } from "./layout.tsx";
import { clearSessionCookie, deleteSession, deleteUserSessions, findSession, sessionToken } from "./sessions.ts";
import { signInRoutes } from "./sign_in.tsx";
import { sendersRoutes } from "./senders.tsx";
import { sendsRoutes } from "./sends.tsx";
import { teamRoutes } from "./team.tsx";
import { templatesRoutes } from "./templates.tsx";
import { walletRoutes } from "./wallet.tsx";
import { webhooksRoutes } from "./webhooks.tsx";
import { workflowsRoutes } from "./workflows.tsx";

/** The answer to a post that did not come from a page of this session. */
const FORGED = "This form has expired or did not come from the dashboard. Go back, reload the page and try again.";

/** Headers of every dashboard page: not cached, not framed, scripts and posts only from here. */
async function pageHeaders(c: Context, next: Next): Promise<void> {
  await next();
  c.header("Cache-Control", "no-store");
  c.header("X-Frame-Options", "DENY");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Referrer-Policy", "same-origin");
  c.header(
    "Content-Security-Policy",
    "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
  );
}

/**
 * Lets through only a live session's requests, and only posts that carry its forgery token; a
 * signed-out visitor is sent to sign in.
 */
function requireSession(deps: Deps) {
  return async function signedIn(c: Context<DashboardEnv>, next: Next): Promise<Response | void> {
    const token = sessionToken(c, deps);
    const user = token ? await findSession(deps.sql, token, deps.now()) : undefined;
    if (!token || !user) return c.redirect(`${BASE}/sign-in`, 303);
    if (c.req.method === "POST" && !await csrfTokenMatches(c, user.csrf)) {
      const message =
        "This form has expired or did not come from the dashboard. Go back, reload the page and try again.";
      return c.html(<MessagePage title="Request refused" message={message} user={user} />, 403);
    }
    c.set("user", user);
    c.set("sessionToken", token);
    await next();
  };
}

/** An error as a page: AppErrors with their status and message, anything else logged and a 500. */
function errorPage(err: Error, c: Context<DashboardEnv>): Promise<Response> | Response {
  const user = c.get("user");
  if (err instanceof AppError) {
    return c.html(<MessagePage title="Something is not right" message={err.message} user={user} />, err.status as 400);
  }
  if (err instanceof HTTPException && err.status === 403) {
    // hono/csrf's refusal of a post from another site.
    return c.html(<MessagePage title="Request refused" message={FORGED} user={user} />, 403);
  }
  log("error", "dashboard error", { request_id: c.get("requestId"), error: String(err), stack: err.stack });
  const message = "Something went wrong on our side. Try again in a moment.";
  return c.html(<MessagePage title="Server error" message={message} user={user} />, 500);
}

/** The dashboard under /dashboard: its own cookie sessions, not the API key. */
export function dashboardRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  app.onError(errorPage);
  app.get(CSS_PATH, () => cssResponse());
  app.get(PREVIEW_SCRIPT_PATH, () => previewScriptResponse());
  app.get(PROGRESS_SCRIPT_PATH, () => progressScriptResponse());
  app.use("*", pageHeaders);
  app.use("*", sameOriginPosts(deps));
  app.route("/", signInRoutes(deps));
  app.use("*", requireSession(deps));
  app.get("/", (c) => c.redirect(`${BASE}/keys`, 303));

  app.post("/sign-out", async (c) => {
    await deleteSession(deps.sql, c.get("sessionToken"));
    clearSessionCookie(c, deps);
    return c.redirect(`${BASE}/sign-in`, 303);
  });

  app.post("/sign-out-everywhere", async (c) => {
    await deleteUserSessions(deps.sql, c.get("user").id);
    clearSessionCookie(c, deps);
    return c.redirect(`${BASE}/sign-in`, 303);
  });

  app.route("/", keysRoutes(deps));
  // Imports before contacts: "/contacts/imports/…" is not a contact's page.
  app.route("/", importRoutes(deps));
  app.route("/", contactsRoutes(deps));
  app.route("/", messagesRoutes(deps));
  app.route("/", teamRoutes(deps));
  app.route("/", templatesRoutes(deps));
  app.route("/", sendsRoutes(deps));
  app.route("/", sendersRoutes(deps));
  app.route("/", walletRoutes(deps));
  app.route("/", webhooksRoutes(deps));
  app.route("/", workflowsRoutes(deps));
  app.route("/", accountRoutes(deps));
  app.all("*", (c) => {
    const message = "There is no such page in the dashboard.";
    return c.html(<MessagePage title="Page not found" message={message} user={c.get("user")} />, 404);
  });
  return app;
}
