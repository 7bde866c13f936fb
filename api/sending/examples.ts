/** Request examples of the send operations (see shared/http/examples.ts for what they name). */
import { EXAMPLE, type RequestExamples } from "../../shared/http/examples.ts";

const { contact, templateKey } = EXAMPLE;
const toContact = { recipient_type: "contact", contact_external_id: contact.external_id };
const toTag = { recipient_type: "tag", tag: [contact.tag] };

/** `POST /api/v1/messages/send`. */
export const EMAIL_EXAMPLES: RequestExamples = {
  direct: {
    summary: "To an address, with subject and content",
    value: {
      recipient_type: "direct_email",
      direct_email: contact.email,
      subject: "Your order has shipped",
      content: "<p>Hi Jane, your order #1042 is on its way.</p>",
    },
  },
  contact: {
    summary: "To a contact, with a template",
    value: { ...toContact, template_key: templateKey, variables: { order_id: "1042" } },
  },
  tag: { summary: "To every contact with a tag", value: { ...toTag, template_key: templateKey } },
};

/** `POST /api/v1/sms/send`. */
export const SMS_EXAMPLES: RequestExamples = {
  direct: {
    summary: "To a phone number (E.164)",
    value: {
      template_key: templateKey,
      recipient_type: "direct_sms",
      direct_phone: contact.phone,
      direct_first_name: contact.first_name,
      variables: { code: "1042" },
    },
  },
  contact: { summary: "To a contact", value: { template_key: templateKey, ...toContact } },
  tag: { summary: "To every contact with a tag", value: { template_key: templateKey, ...toTag } },
};

/** `POST /api/v1/whatsapp/send`. */
export const WHATSAPP_EXAMPLES: RequestExamples = {
  direct: {
    summary: "To a WhatsApp number, with numbered variables",
    value: {
      template_key: templateKey,
      recipient_type: "direct_whatsapp",
      direct_whatsapp: contact.phone,
      conversation_category: "UTILITY",
      variables: { "1": "Jane", "2": "1042" },
    },
  },
  contact: {
    summary: "To a contact",
    value: { template_key: templateKey, ...toContact, conversation_category: "UTILITY", variables: { "1": "Jane" } },
  },
};

/** `POST /api/v1/push/send`. */
export const PUSH_EXAMPLES: RequestExamples = {
  direct: {
    summary: "To a device token, with title and body",
    value: {
      recipient_type: "direct_push",
      direct_device_token: EXAMPLE.deviceToken,
      direct_platform: "android",
      title: "Your order has shipped",
      body: "Order #1042 is on its way.",
      click_action: "myapp://orders/1042",
      custom_data: { order_id: "1042" },
    },
  },
  contact: {
    summary: "To a contact's devices, with a template",
    value: { ...toContact, template_key: templateKey, message_category: "transactional" },
  },
};

/** `POST /api/v1/messages/trigger`. */
export const TRIGGER_EXAMPLES: RequestExamples = {
  contact: {
    summary: "Email and SMS to a contact, one template key",
    value: {
      ...toContact,
      channels: ["email", "sms"],
      template_key: templateKey,
      variables: { order_id: "1042" },
    },
  },
  tag: {
    summary: "Email and push to every contact with a tag",
    value: {
      recipient_type: "tag",
      tags: [contact.tag],
      channels: ["email", "push"],
      template_key: templateKey,
      push_title: "Welcome",
      push_body: "Thanks for joining",
    },
  },
};
