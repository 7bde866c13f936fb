import type { Context, Next } from "hono";
import type { Deps, Team } from "../deps.ts";
import { AuthenticationError, ForbiddenError, UnauthorizedError } from "../errors.ts";
import {
  contactInBody,
  contactInPath,
  type ContactSubject,
  eventContact,
  externalIdInPath,
  requireContactToken,
} from "./contact_token_check.ts";
import type { AppEnv } from "./env.ts";

const PREFERENCE_METHODS = /^(GET|PATCH|PUT|DELETE|POST)$/;

/**
 * What a publishable key may do (a preference centre): create a contact; read one contact (by id or
 * external id) with its preferences; change its preferences; register its device tokens; send an
 * event. Each entry also says which contact the request is about, for contact tokens; the path's
 * first group is the contact reference. The first entry that matches wins.
 */
const PUBLISHABLE_ALLOWED: { method: RegExp; path: RegExp; subject: ContactSubject }[] = [
  { method: /^POST$/, path: /^\/api\/v1\/contacts\/?$/, subject: contactInBody },
  { method: /^GET$/, path: /^\/api\/v1\/contacts\/external\/([^/]+)\/?$/, subject: externalIdInPath },
  { method: /^PATCH$/, path: /^\/api\/v1\/contacts\/external\/([^/]+)\/device-token\/?$/, subject: externalIdInPath },
  {
    method: PREFERENCE_METHODS,
    path: /^\/api\/v1\/contacts\/external\/([^/]+)\/preferences(\/.*)?$/,
    subject: externalIdInPath,
  },
  { method: /^GET$/, path: /^\/api\/v1\/contacts\/([^/]+)\/?$/, subject: contactInPath },
  { method: PREFERENCE_METHODS, path: /^\/api\/v1\/contacts\/([^/]+)\/preferences(\/.*)?$/, subject: contactInPath },
  { method: /^POST$/, path: /^\/api\/v1\/events\/send\/?$/, subject: eventContact },
];

/** What a publishable key's request is about, or undefined when such a key may not call it. */
function publishableCall(method: string, path: string): { subject: ContactSubject; param?: string } | undefined {
  for (const allowed of PUBLISHABLE_ALLOWED) {
    const match = allowed.method.test(method) ? allowed.path.exec(path) : null;
    if (match) return { subject: allowed.subject, param: match[1] };
  }
  return undefined;
}

/** True when a publishable key may call this method and path. */
export function publishableMayCall(method: string, path: string): boolean {
  return publishableCall(method, path) !== undefined;
}

/**
 * Authenticates `X-API-Key` (401 Shape B): the request's team and key. What the key may do is
 * checked after its rate limit (keyScope), so that those refusals count and carry its headers.
 */
export function apiKeyAuth(deps: Deps) {
  return async function authenticate(c: Context<AppEnv>, next: Next): Promise<void> {
    const key = c.req.header("x-api-key")?.trim();
    if (!key) throw new AuthenticationError("Missing API key", missingKeyHint(c.req.header("authorization")));
    const record = await deps.keys.get(deps.sql, key, deps.now());
    if (!record) throw new AuthenticationError("Invalid API key", invalidKeyHint(key));
    c.set("team", record.team);
    c.set("apiKey", record.apiKey);
    await next();
  };
}

/** What to do about a request without `X-API-Key`: the header to use, and why a Bearer token is not read. */
export function missingKeyHint(authorization: string | undefined): string {
  if (authorization !== undefined && /^\s*bearer\s/i.test(authorization)) {
    return "Send the API key in the X-API-Key header: the Authorization header is not read on /api/v1";
  }
  return "Send the API key in the X-API-Key header";
}

/** What to do about an unknown key, when its form tells (a `Bearer ` prefix); undefined otherwise. */
function invalidKeyHint(key: string): string | undefined {
  return /^bearer\s/i.test(key) ? "Send the key alone in the X-API-Key header, without 'Bearer '" : undefined;
}

/**
 * Checks `X-Team-ID` when present (401 'Invalid team context') and keeps publishable keys to what
 * they may do (403), with the contact token their team may require (401). Runs after apiKeyAuth.
 */
export function keyScope(deps: Deps) {
  return async function scopeKey(c: Context<AppEnv>, next: Next): Promise<void> {
    if (!teamHeaderFits(c.req.header("x-team-id"), c.get("team"))) throw invalidTeamContext(c.get("team"), "mismatch");
    if (!c.get("apiKey").secret) {
      const call = publishableCall(c.req.method, c.req.path);
      if (!call) throw new ForbiddenError();
      await requireContactToken(c, deps, call);
    }
    await next();
  };
}

/** Whether an `X-Team-ID` header (when sent) names the key's team. */
function teamHeaderFits(header: string | undefined | null, team: Team): boolean {
  // Team ids are UUIDs, which compare case-insensitively (ours are stored in lowercase).
  return header === undefined || header === null || header.trim().toLowerCase() === team.id;
}

/**
 * 401 'Invalid team context' (the specification's words), with `details` naming the header and a hint
 * giving the key's team id: the key is known by then, so the caller is only told its own team.
 */
export function invalidTeamContext(team: Team, why: "missing" | "mismatch"): UnauthorizedError {
  const hint = why === "missing"
    ? `This endpoint requires the X-Team-ID header: send X-Team-ID: ${team.id} (the team of this API key)`
    : `X-Team-ID must name the team of this API key: X-Team-ID: ${team.id}`;
  return new UnauthorizedError("Invalid team context", "invalid_team_context", {
    details: { field: "X-Team-ID", code: why === "missing" ? "required" : "invalid_value" },
    hint,
  });
}

/** Requires `X-Team-ID` (the event endpoint): missing is 401 'Invalid team context'. */
export function requireTeamHeader() {
  return async function teamHeaderRequired(c: Context<AppEnv>, next: Next): Promise<void> {
    if (!c.req.header("x-team-id")?.trim()) throw invalidTeamContext(c.get("team"), "missing");
    await next();
  };
}
