/** Request examples of the workflow operations (see shared/http/examples.ts for what they name). */
import { EXAMPLE, type RequestExamples } from "../../shared/http/examples.ts";

const { contact, templateKey, workflow } = EXAMPLE;

/** `POST /api/v1/workflows`. */
export const CREATE_WORKFLOW_EXAMPLES: RequestExamples = {
  twoSteps: {
    summary: "An email at once, an SMS a day later",
    value: {
      name: "cart_recovery",
      description: "Reminds a shopper of an abandoned cart",
      event_type: "cart_abandoned",
      steps: [
        {
          step_order: 1,
          channel_type: "email",
          step_name: "Reminder email",
          configuration: { template_id: templateKey, delay_minutes: 0 },
        },
        {
          step_order: 2,
          channel_type: "sms",
          step_name: "Last call SMS",
          configuration: { template_id: templateKey, delay_minutes: 1440, variables: { discount: "10%" } },
        },
      ],
    },
  },
};

/** `PATCH /api/v1/workflows/{id}`. */
export const UPDATE_WORKFLOW_EXAMPLES: RequestExamples = {
  describe: {
    summary: "Change the description, keep the steps",
    value: { description: "Welcomes a new user", is_active: true },
  },
};

/** `POST /api/v1/workflows/trigger`. */
export const TRIGGER_WORKFLOW_EXAMPLES: RequestExamples = {
  contact: {
    summary: "For one contact, by workflow name",
    value: {
      workflow_name: workflow.name,
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      variables: { plan: "pro" },
    },
  },
  tag: {
    summary: "For every contact with all the tags",
    value: {
      workflow_name: workflow.name,
      recipient_type: "tag",
      tags: [contact.tag],
      channel_variables: { sms: { short_name: "Jane" } },
    },
  },
};

/** `POST /api/v1/workflows/send`. */
export const SEND_WORKFLOW_EXAMPLES: RequestExamples = {
  overrides: {
    summary: "With the first step's variables and delay overridden",
    value: {
      workflow_name: workflow.name,
      recipient_type: "contact",
      contact_external_id: contact.external_id,
      steps_override: { "1": { delay_minutes: 0, variables: { coupon: "WELCOME10" } } },
      metadata: { source: "crm" },
    },
  },
};
