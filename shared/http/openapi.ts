/**
 * What the OpenAPI document says beyond the routes: the guide at its top, the tags in reading order,
 * and the request headers that apply to groups of operations.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";
import { API_GUIDE } from "./api_guide.ts";
import { publishableMayCall } from "./auth.ts";

/** A tag of the document: its name, the sidebar group it belongs to, and what its operations are for. */
interface TagDefinition {
  name: string;
  group: string;
  description: string;
}

/** Every tag, in the order a user reads them; callbacks and the operator's admin API last. */
export const TAGS = [
  {
    name: "Contacts",
    group: "Contacts",
    description: "The people you message. A contact is found by its `id` (UUID) or by your own `external_id`; " +
      "sends name contacts by `contact_external_id`. Phone numbers live in `custom_fields.phone` (E.164).",
  },
  {
    name: "Contact preferences",
    group: "Contacts",
    description: "Per channel and category (`transactional`, `promotional`) opt-ins. New contacts are opted in " +
      "to everything except promotional email, WhatsApp and push. Sends skip contacts that are not opted in.",
  },
  {
    name: "Templates",
    group: "Sending",
    description: "Templates are made in the dashboard (or the admin API). Check that a key resolves " +
      "before you send with it.",
  },
  {
    name: "Email",
    group: "Sending",
    description: "Send email to an address, a contact, the contacts with a tag, a segment or everyone. " +
      "The answer is 201 with a `trigger_id` at once; delivery happens in the background.",
  },
  {
    name: "SMS",
    group: "Sending",
    description: "Send an approved SMS template. Charged per segment from the wallet (not with a test key).",
  },
  {
    name: "WhatsApp",
    group: "Sending",
    description: "Send an approved WhatsApp template (`{{1}}`, `{{2}}` placeholders). Charged per conversation.",
  },
  {
    name: "Push",
    group: "Sending",
    description: "Send a push notification to a device token or to the devices registered for contacts.",
  },
  {
    name: "Multi-channel",
    group: "Sending",
    description: "One request, one template key, several channels; each channel is tracked as its own execution.",
  },
  {
    name: "OTP",
    group: "OTP",
    description: "One-time passwords on email, SMS and WhatsApp: send, verify (per channel, progressively) " +
      "and resend. `sandbox_mode: true` sends nothing, charges nothing and returns the codes.",
  },
  {
    name: "Workflows",
    group: "Workflows and events",
    description: "Multi-step, multi-channel sequences with delays, started through the API or by an event.",
  },
  {
    name: "Events",
    group: "Workflows and events",
    description: "Named events (snake_case) start the active workflows whose `event_type` is the event's name.",
  },
  {
    name: "Tracking",
    group: "Tracking",
    description: "Every accepted send, trigger, event and workflow start answers a `trigger_id`: read its " +
      "status and counts here. Each channel's executions and their per-recipient messages are under the channel.",
  },
  {
    name: "Webhooks",
    group: "Webhooks",
    description: "Endpoints of yours that receive events (`message.delivered`, `trigger.completed` …), " +
      "signed per the Standard Webhooks specification and retried with back-off for at least 24 hours.",
  },
  {
    name: "System",
    group: "Operations",
    description: "Health check and Prometheus metrics, for load balancers and monitoring.",
  },
  {
    name: "Inbound callbacks",
    group: "Provider callbacks",
    description: "Called by Twilio and Resend, not by you: delivery statuses and STOP/START replies. " +
      "Each is checked with its provider's signature instead of an API key.",
  },
  {
    name: "Admin",
    group: "Admin",
    description: "The operator's API (the dashboard's functions): teams, keys, wallet, templates, sender " +
      "identities, domains, segments and the outbox. Authenticated with `Authorization: Bearer <ADMIN_TOKEN>`.",
  },
] as const satisfies readonly TagDefinition[];

/** The name of one of the document's tags. */
export type TagName = (typeof TAGS)[number]["name"];

/** A route's `tags`: one tag of the list (a name outside it does not type-check). */
export function tag(name: TagName): [TagName] {
  return [name];
}

/**
 * What tells apart the twin operations of a record reached by its id and by its `external_id`
 * (their summaries would read the same in the sidebar).
 */
export function externalIdNote(path: string): string {
  return path.includes("{external_id}") ? " (by external id)" : "";
}

/** `X-Team-ID`: the team of the key; required where `required`, else checked only when sent. */
export function teamIdHeader(required = false) {
  return {
    name: "X-Team-ID",
    in: "header" as const,
    required,
    description: required
      ? "The id of the key's team. Missing or another team's id is 401 'Invalid team context'."
      : "Optional: the id of the key's team. When sent, another team's id is 401 'Invalid team context'.",
    schema: { type: "string" as const, format: "uuid", example: "0b9f4c2e-6d1a-4e7b-9c3f-2a8d5e1f7b64" },
  };
}

/** `Idempotency-Key`: retries of a send or trigger with the same key create nothing new. */
export const IDEMPOTENCY_KEY_HEADER = {
  name: "Idempotency-Key",
  in: "header" as const,
  required: false,
  description: "A unique string per intended send (a UUID). The same key and body within 24 hours answer " +
    "the first response again, with `Idempotent-Replayed: true`, and send nothing; the same key with " +
    "another body is 422; while the first request is still running, 409.",
  schema: { type: "string" as const, example: "5f0c9a7e-3b1d-4c2a-8e6f-9d7b1a2c3e4f" },
};

/** The headers of every operation that sends or triggers (DESIGN.md, wire conventions). */
export const SEND_HEADERS = [IDEMPOTENCY_KEY_HEADER];

/** Serves the document at `path`: the routes' definitions with the guide, the tags and the security schemes. */
export function serveDocument(app: OpenAPIHono<AppEnv>, path: string): void {
  const config = {
    openapi: "3.1.0",
    info: { title: "Multi-channel messaging API", version: "1.0.0", description: API_GUIDE },
    security: [{ ApiKey: [] }],
    tags: TAGS.map(({ name, description }) => ({ name, description })),
    // Sidebar sections of reference viewers (Scalar, Redoc), in the same order.
    "x-tagGroups": [...new Set(TAGS.map((t) => t.group))].map((group) => ({
      name: group,
      tags: TAGS.filter((t) => t.group === group).map((t) => t.name),
    })),
  };
  app.openAPIRegistry.registerComponent("securitySchemes", "ApiKey", {
    type: "apiKey",
    in: "header",
    name: "X-API-Key",
    description: "A secret key (`sk_live_…`, `sk_test_…`) or a publishable key (`pk_live_…`, `pk_test_…`).",
  });
  // Built on the first request, once every route is registered: the routes never change after that.
  let document: Document | undefined;
  app.get(path, (c) => c.json(document ??= withKeyHeaders(app.getOpenAPI31Document(config))));
}

type Document = ReturnType<OpenAPIHono["getOpenAPI31Document"]>;
type Parameter = { name?: string; in?: string };

/**
 * Declares the optional `X-Team-ID` on every operation that takes an API key and does not declare it
 * already (the key check reads it on every `/api/v1` request: shared/http/auth.ts, keyScope), and
 * `X-Contact-Token` on those a publishable key may call (checked when the team requires contact tokens).
 */
function withKeyHeaders(doc: Document): Document {
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    if (!path.startsWith("/api/v1/") || path.startsWith("/api/v1/inbound/")) continue;
    for (const [method, op] of Object.entries(item as Record<string, { parameters?: Parameter[] }>)) {
      if (typeof op !== "object" || op === null || !("responses" in op)) continue;
      const parameters = op.parameters ?? [];
      const declares = (name: string) => parameters.some((p) => p.in === "header" && p.name?.toLowerCase() === name);
      if (!declares("x-team-id")) parameters.push(teamIdHeader());
      if (publishableMayCall(method.toUpperCase(), path) && !declares("x-contact-token")) {
        parameters.push(CONTACT_TOKEN_HEADER);
      }
      op.parameters = parameters;
    }
  }
  return doc;
}

/** `X-Contact-Token`: what a publishable key's request about a contact carries when its team requires it. */
const CONTACT_TOKEN_HEADER = {
  name: "X-Contact-Token",
  in: "header" as const,
  required: false,
  description: "With a publishable key, when the team has turned contact tokens on: the lowercase hex " +
    "HMAC-SHA256 of the contact's external id under the team's contact-token secret (docs/contact-tokens.md). " +
    "Missing or wrong is 401.",
  schema: { type: "string" as const, pattern: "^[0-9a-f]{64}$" },
};
