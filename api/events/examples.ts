/** Request examples of the event operation (see shared/http/examples.ts for what they name). */
import { EXAMPLE, type RequestExamples } from "../../shared/http/examples.ts";

/** `POST /api/v1/events/send`. */
export const EVENT_EXAMPLES: RequestExamples = {
  signup: {
    summary: "A sign-up, for the workflows listening for it",
    value: {
      event_name: EXAMPLE.workflow.event_type,
      user_info: {
        contact_external_id: EXAMPLE.contact.external_id,
        email: EXAMPLE.contact.email,
        name: "Jane Doe",
      },
      source: { type: "web_signup", ip: "203.0.113.7", user_agent: "Mozilla/5.0" },
      event_data: { plan: "pro" },
      variables: { first_name: "Jane" },
    },
  },
};
