/**
 * What the request examples of the OpenAPI document name: one team's template, contact, tag and
 * workflow. With a test key of a team that has these, every example works as written (the examples
 * test builds such a team and sends each one).
 */
export const EXAMPLE = {
  /** A template key with a template on every channel. */
  templateKey: "welcome",
  /** A contact: its external id, address, number and tag. */
  contact: {
    external_id: "user_123",
    email: "jane@example.com",
    first_name: "Jane",
    last_name: "Doe",
    phone: "+14155550123",
    tag: "vip",
  },
  /** A push device token (an FCM registration token's shape). */
  deviceToken: "fJ3kZ8qLTvOw2mRr9XbYc1:APA91bHqK7xN2pLmV5sWdE8uTgRz4yCoIa6FjBn0MhQe3Sk",
  /** A workflow listening for an event. */
  workflow: { name: "onboarding", event_type: "user_signup" },
  /** Values that come from an earlier answer (an OTP send's session token and sandbox codes). */
  sessionToken: "<SESSION_TOKEN>",
  otpCode: "<OTP_CODE>",
} as const;

/** Named request examples of an operation, as OpenAPI media types hold them. */
export type RequestExamples = Record<string, { summary: string; value: Record<string, unknown> }>;
