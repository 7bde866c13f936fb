/**
 * Known-good request bodies per operation (team B's references), for the fuzz test to send as they
 * are or with a field or two replaced: requests built from the schemas alone seldom pass every
 * cross-field rule, so without these the handlers behind validation would hardly be reached.
 */
import type { RefPool } from "./generate.ts";

/** What the examples draw on: team B's references and its template key. */
export interface ExampleRefs {
  own: RefPool;
  /** OTP sessions: the first is verified by the examples, the last resent. */
  sessions: { token: string; code: string }[];
  contactExternalId: string;
  workflowId: string;
  templateKey: string;
  tag: string;
}

const FCM = `fcm-${"f".repeat(40)}`;

/** The example bodies of `METHOD path` (none when the operation takes no body). */
export function examples(op: string, r: ExampleRefs): Record<string, unknown>[] {
  const email = () => `fz.${crypto.randomUUID().slice(0, 8)}@example.com`;
  const prefs = { preferences: [{ channel: "email", category: "promotional", subscribed: true }] };
  const step = { step_order: 1, channel_type: "email", step_name: "s", configuration: { template_id: r.templateKey } };
  const start = { workflow_id: r.workflowId, recipient_type: "contact", contact_external_id: r.contactExternalId };
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
    case "POST /api/v1/workflows/trigger":
      return [start, { workflow_id: r.workflowId, recipient_type: "tag", tags: [r.tag] }];
    case "POST /api/v1/workflows/send":
      return [{ ...start, steps_override: { "1": { delay_minutes: 1 } } }];
    case "POST /api/v1/workflows":
      return [{ name: "fz", event_type: "fz_event", steps: [step] }];
    case "PATCH /api/v1/workflows/{id}":
      return [{ name: "renamed" }, { steps: [step], is_active: true }];
    case "POST /api/v1/events/send":
      return [{ event_name: "beta_event", user_info: { contact_external_id: r.contactExternalId } }];
    case "POST /api/v1/webhooks":
      return [{ url: "https://93.184.216.34/hook" }, { url: "https://93.184.216.34/h", events: ["message.sent"] }];
    case "PATCH /api/v1/webhooks/{id}":
      return [{ is_active: false }, { events: ["trigger.completed"] }];
    case "POST /api/v1/messages/send":
      return [
        { recipient_type: "direct_email", direct_email: email(), subject: "S", content: "<p>c</p>" },
        { recipient_type: "contact", contact_external_id: r.contactExternalId, template_key: r.templateKey },
        { recipient_type: "tag", tag: [r.tag], template_key: r.templateKey },
      ];
    case "POST /api/v1/messages/trigger":
      return [{
        recipient_type: "contact",
        channels: ["email", "sms"],
        contact_external_id: r.contactExternalId,
        template_key: r.templateKey,
      }];
    case "POST /api/v1/sms/send":
      return [
        { template_key: r.templateKey, recipient_type: "direct_sms", direct_phone: "+447700900123" },
        { template_key: r.templateKey, recipient_type: "contact", contact_external_id: r.contactExternalId },
      ];
    case "POST /api/v1/whatsapp/send":
      return [{
        template_key: r.templateKey,
        recipient_type: "direct_whatsapp",
        direct_whatsapp: "+447700900123",
        conversation_category: "UTILITY",
        variables: { "1": "x" },
      }];
    case "POST /api/v1/push/send":
      return [
        { recipient_type: "direct_push", direct_device_token: FCM, title: "T", body: "B" },
        { recipient_type: "contact", contact_external_id: r.contactExternalId, template_key: r.templateKey },
      ];
    default:
      return [];
  }
}
