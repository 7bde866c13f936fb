/**
 * Known-good request bodies per operation (team B's references), for the fuzz test to send as they
 * are or with a field or two replaced: requests built from the schemas alone seldom pass every
 * cross-field rule, so without these the handlers behind validation would hardly be reached.
 */
import { EXAMPLE } from "../../shared/http/examples.ts";
import type { RefPool } from "./generate.ts";

/** What the examples draw on: team B's references and its template key. */
export interface ExampleRefs {
  own: RefPool;
  /** OTP sessions: the first is verified by the examples, the last resent. */
  sessions: { token: string; code: string }[];
  contactExternalId: string;
  workflowId: string;
  /** The workflow's name and the event it listens for. */
  workflowName: string;
  eventName: string;
  templateKey: string;
  tag: string;
}

const FCM = `fcm-${"f".repeat(40)}`;

/**
 * The request examples the OpenAPI document shows for `op` (sends, triggers, events, workflow starts),
 * naming team B's records where they name the example team's (shared/http/examples.ts).
 */
export function documentExamples(doc: Document, op: string, r: ExampleRefs): Record<string, unknown>[] {
  const [method, path] = op.split(" ");
  const content = doc.paths[path]?.[method.toLowerCase()]?.requestBody?.content?.["application/json"];
  const names = new Map<unknown, unknown>([
    [EXAMPLE.templateKey, r.templateKey],
    [EXAMPLE.contact.external_id, r.contactExternalId],
    [EXAMPLE.contact.tag, r.tag],
    [EXAMPLE.workflow.name, r.workflowName],
    [EXAMPLE.workflow.event_type, r.eventName],
  ]);
  const rebound = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(rebound)
      : value && typeof value === "object"
      ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebound(v)]))
      : names.has(value)
      ? names.get(value)
      : value;
  // Those that take a session from an earlier answer are left to examples() below, which has one.
  return Object.values(content?.examples ?? {})
    .filter((e) => !JSON.stringify(e.value).includes(EXAMPLE.sessionToken))
    .map((e) => rebound(e.value) as Record<string, unknown>);
}

/** The parts of the OpenAPI document that documentExamples reads. */
type Document = {
  paths: Record<
    string,
    Record<string, { requestBody?: { content?: Record<string, { examples?: Record<string, { value: unknown }> }> } }>
  >;
};

/** The example bodies of `METHOD path` (none when the operation takes no body). */
export function examples(op: string, r: ExampleRefs): Record<string, unknown>[] {
  const email = () => `fz.${crypto.randomUUID().slice(0, 8)}@example.com`;
  const prefs = { preferences: [{ channel: "email", category: "promotional", subscribed: true }] };
  const step = { step_order: 1, channel_type: "email", step_name: "s", configuration: { template_id: r.templateKey } };
  const path = op.split(" ")[1];
  if (/\/preferences\/\{channel\}\/\{category\}$/.test(path)) return [{ subscribed: false }];
  if (/\/preferences$/.test(path)) return [prefs];
  if (/\/tags$/.test(path)) return [{ tags: [r.tag, "fz-tag"] }];
  if (/\/templates\/email\//.test(path)) return [{ subject: "Hi {{contact_first_name}}", html: "<p>x</p>" }];
  if (/\/templates\/sms\//.test(path)) return [{ body: "Hi {{contact_first_name}}" }];
  if (/\/templates\/whatsapp\//.test(path)) return [{ body: "Hi {{1}}", category: "UTILITY" }];
  if (/\/templates\/push\//.test(path)) return [{ title: "T", body: "B" }];
  switch (op) {
    case "POST /admin/v1/teams":
      return [{ name: "fuzz team" }, { name: "fuzz team", plan: "free" }];
    case "POST /admin/v1/teams/{team_id}/keys":
      return [{ kind: "live" }, { kind: "publishable" }];
    case "POST /admin/v1/teams/{team_id}/wallet/topup":
      return [{ amount: 5 }];
    case "PUT /admin/v1/teams/{team_id}/identities/{channel}/{identity_id}":
      return [{ from: "+15005550006" }, { from: "news@example.com", name: "News", is_default: false }];
    case "PUT /admin/v1/teams/{team_id}/domains/{domain}":
      return [{ verified: true }];
    case "PUT /admin/v1/teams/{team_id}/segments/{segment_id}":
      return [{ name: "S", filter: { tags_all: [r.tag] } }];
    case "PATCH /admin/v1/teams/{team_id}/settings":
      return [{ otp: { allowed_countries: ["US", "GB"] } }, { otp: { fraud_guard: { min_sends: 50 } } }];
    case "POST /admin/v1/teams/{team_id}/users":
      return [{ email: email(), password: "correct horse battery", role: "member" }];
    case "POST /api/v1/contacts":
      return [{ email: email(), first_name: "Fuzz", tags: [r.tag], custom_fields: { phone: "+447700900123" } }];
    case "PUT /api/v1/contacts/{id}":
    case "PATCH /api/v1/contacts/{id}":
    case "PATCH /api/v1/contacts/external/{external_id}":
      return [{ first_name: "Renamed" }, { tags: [r.tag], custom_fields: { plan: "x" } }];
    case "POST /api/v1/contacts/bulk":
      return [{ contacts: [{ email: email() }, { email: email(), tags: [r.tag] }, { email: "bad" }] }];
    case "PATCH /api/v1/contacts/external/{external_id}/device-token":
      return [{ token: FCM, platform: "android" }, { fcm_token: FCM }];
    case "POST /api/v1/otp/send":
      return [{ channels: ["email"], recipients: { email: email() }, sandbox_mode: true }];
    case "POST /api/v1/otp/verify":
      return [
        { session_token: r.sessions[0].token, otps: { email: r.sessions[0].code } },
        { token: r.sessions[0].token, otps: { email: "000000" } },
      ];
    case "POST /api/v1/otp/resend":
      return [{ session_token: r.sessions[r.sessions.length - 1].token }];
    case "POST /api/v1/workflows":
      return [{ name: "fz", event_type: "fz_event", steps: [step] }];
    case "PATCH /api/v1/workflows/{id}":
      return [{ name: "renamed" }, { steps: [step], is_active: true }];
    case "POST /api/v1/webhooks":
      return [{ url: "https://93.184.216.34/hook" }, { url: "https://93.184.216.34/h", events: ["message.sent"] }];
    case "PATCH /api/v1/webhooks/{id}":
      return [{ is_active: false }, { events: ["trigger.completed"] }];
    default:
      return [];
  }
}
