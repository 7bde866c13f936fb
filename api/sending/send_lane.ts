import type { OpenAPIHono } from "@hono/zod-openapi";
import type { ApiKey, Deps, Team } from "../../shared/deps.ts";
import { errorAnswer, MAX_BODY_BYTES, requestDone } from "../../shared/http/app.ts";
import { teamHeaderFits } from "../../shared/http/auth.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { countRequest } from "../../shared/http/rate_limit.ts";
import { bodyRefusal, protoKeyRefusalOfText } from "../../shared/http/validation.ts";
import { type LaneRoute, laneRouteOf } from "./send_route.ts";

/**
 * What runs on a send route before its handler, in order: the lane does the same work for the
 * requests it takes (see SendLane). A middleware added in front of a send route must be taught to
 * the lane (or the lane told to leave that route alone): until then the service does not start.
 */
const KNOWN_CHAIN = [
  "requestContext", // a request id and its header; metrics and access log once answered
  "jsonBody", // a declared length over 1 MiB is 413; an empty JSON body is {}
  "cors", // only with an Origin header
  "authenticate", // X-API-Key: 401 when missing or unknown
  "limitRate", // counts the request; X-RateLimit-* headers; 429
  "scopeKey", // X-Team-ID must name the key's team; publishable keys may not send
  "idempotent", // only with an Idempotency-Key header
  "mediaTypeGate", // the route's Content-Type check (415)
  "", // the route's zod validator, then its hook (newRouter's defaultHook): 400
];

/** A request the lane takes: its key's team and key, and its valid body. */
interface Taken {
  team: Team;
  apiKey: ApiKey;
  body: unknown;
}

/**
 * The fast lane of the send routes (POST /api/v1/{sms,whatsapp,push}/send, /messages/send), the
 * service's busiest path. Hono's middleware chain, context and validator hooks cost about as much
 * CPU as the send itself (docs/architecture.md, "A request"): the lane serves an ordinary send, one that would
 * pass every middleware untouched, with the same steps called directly: the API key from the key
 * cache, the rate limit, the route's own zod schema and body checks, the route's accept, and the
 * same answer, headers, metrics and log line. Anything else goes to the app, unread or with its body
 * text, before the request is counted: no Origin or Idempotency-Key header, a JSON Content-Type and
 * a declared length, a known secret key of the team X-Team-ID names, and a body the route's schema
 * takes. Every answer to an ordinary send therefore comes from the same code as before; only the
 * way to it is shorter.
 */
export class SendLane {
  readonly #app: OpenAPIHono<AppEnv>;
  readonly #deps: Deps;
  readonly #routes = new Map<string, LaneRoute>();
  /** Requests the lane answered, and send requests it handed to the app (tests read these). */
  readonly counts = { served: 0, declined: 0 };

  constructor(app: OpenAPIHono<AppEnv>, deps: Deps) {
    this.#app = app;
    this.#deps = deps;
    for (const { method, path, handler } of app.routes) {
      const route = laneRouteOf(handler);
      if (method !== "POST" || !route) continue;
      checkChain(app, path, handler);
      this.#routes.set(path, route);
    }
  }

  /** The paths the lane serves. */
  get paths(): string[] {
    return [...this.#routes.keys()];
  }

  /** Answers a request: in the lane when it can, else through the app. */
  fetch = async (req: Request, info?: unknown): Promise<Response> => {
    const path = req.method === "POST" ? pathOf(req.url) : undefined;
    const route = path === undefined ? undefined : this.#routes.get(path);
    if (!route) return await this.#app.fetch(req, info);
    const started = performance.now();
    let taken: Taken | Request | Error | undefined;
    try {
      taken = await this.#take(req, route);
    } catch (err) {
      // The key look-up or the body read failed: answered as the app answers such a failure (a 500).
      taken = err instanceof Error ? err : new Error(String(err));
    }
    if (!taken || taken instanceof Request) {
      this.counts.declined++;
      return await this.#app.fetch(taken ?? req, info);
    }
    this.counts.served++;
    return await this.#serve(route, path!, taken, started);
  };

  /**
   * The request's team, key and valid body when the lane can serve it; else the request to hand to
   * the app: `req` itself while its body is unread, else a copy carrying the body's text.
   */
  async #take(req: Request, route: LaneRoute): Promise<Taken | Request | undefined> {
    const headers = req.headers;
    if (headers.has("origin") || headers.has("idempotency-key")) return;
    if (!isJsonType(headers.get("content-type"))) return;
    const length = Number(headers.get("content-length") ?? Number.NaN);
    if (!(length > 0 && length <= MAX_BODY_BYTES)) return;
    const key = headers.get("x-api-key")?.trim();
    if (!key) return;
    const record = await this.#deps.keys.get(this.#deps.sql, key, this.#deps.now());
    if (!record?.apiKey.secret || !teamHeaderFits(headers.get("x-team-id"), record.team)) return;
    const text = await req.text();
    const copy = () => new Request(req, { body: text });
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return copy();
    }
    const result = parseSync(route, body);
    if (!result?.success || protoKeyRefusalOfText(text) || bodyRefusal(result.data)) return copy();
    return { team: record.team, apiKey: record.apiKey, body: result.data };
  }

  /** Counts the request, runs the route and answers as the app would (the same body, headers, metrics and log). */
  async #serve(route: LaneRoute, path: string, taken: Taken | Error, started: number): Promise<Response> {
    const requestId = crypto.randomUUID();
    const headers: Record<string, string> = { "content-type": "application/json", "x-request-id": requestId };
    let status = 201;
    let body: unknown;
    try {
      if (taken instanceof Error) throw taken;
      const counted = await countRequest(this.#deps, taken.team, taken.apiKey);
      addHeaders(headers, counted.headers);
      if (counted.refusal) throw counted.refusal;
      body = await route.accept(taken.body, taken.team, taken.apiKey);
    } catch (err) {
      const answer = errorAnswer(err instanceof Error ? err : new Error(String(err)), requestId);
      addHeaders(headers, answer.headers);
      ({ status, body } = answer);
    }
    const teamId = taken instanceof Error ? undefined : taken.team.id;
    requestDone({ requestId, teamId, method: "POST", route: path, path, status, started });
    return new Response(JSON.stringify(body), { status, headers });
  }
}

/**
 * Adds `more` to an answer's headers under lowercase names, as the app's answers have them: Hono's
 * Headers lowercases names, and Deno writes a name on the wire as it is given.
 */
function addHeaders(headers: Record<string, string>, more: Record<string, string>): void {
  for (const name in more) headers[name.toLowerCase()] = more[name];
}

/** The route's zod parse of `body`; undefined when its schema cannot parse synchronously (the app's validator can). */
function parseSync(route: LaneRoute, body: unknown) {
  try {
    return route.body.safeParse(body);
  } catch {
    return undefined;
  }
}

/** The path of an absolute URL; undefined when it has a query or an escape (the app reads those). */
function pathOf(url: string): string | undefined {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const path = start < 0 ? "/" : url.slice(start);
  return path.includes("?") || path.includes("%") ? undefined : path;
}

/** `application/json`, with a UTF-8 charset or none: what every JSON client sends. */
function isJsonType(type: string | null): boolean {
  if (type === null) return false;
  const lower = type.toLowerCase();
  return lower === "application/json" || /^application\/json; ?charset="?utf-8"?$/.test(lower);
}

/** Throws unless what runs on POST `path` before `handler` is the chain the lane knows. */
function checkChain(app: OpenAPIHono<AppEnv>, path: string, handler: unknown): void {
  const matched = app.router.match("POST", path)[0].map(([[h]]) => h);
  const names = matched.slice(0, -1).map((h) => h.name);
  if (matched.at(-1) === handler && names.join() === KNOWN_CHAIN.join()) return;
  throw new Error(
    `The send lane (api/sending/send_lane.ts) does not know what runs on POST ${path}: ${names.join(", ")}`,
  );
}
