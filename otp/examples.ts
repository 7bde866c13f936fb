/** Request examples of the OTP operations (see shared/http/examples.ts for what they name). */
import { EXAMPLE, type RequestExamples } from "../shared/http/examples.ts";

/** `POST /api/v1/otp/send`. */
export const SEND_OTP_EXAMPLES: RequestExamples = {
  sandbox: {
    summary: "By email, in sandbox mode (nothing sent, the code returned)",
    value: { channels: ["email"], recipients: { email: EXAMPLE.contact.email }, sandbox_mode: true },
  },
  all: {
    summary: "By email and SMS, both to be verified, with settings",
    value: {
      channels: ["email", "sms"],
      recipients: { email: EXAMPLE.contact.email, sms: EXAMPLE.contact.phone },
      config: { otp_length: 6, expiry_minutes: 10, max_attempts: 3 },
      verification_mode: "all",
      metadata: { purpose: "login" },
      sandbox_mode: true,
    },
  },
};

/** `POST /api/v1/otp/verify`: the token and code come from the send's answer. */
export const VERIFY_OTP_EXAMPLES: RequestExamples = {
  email: {
    summary: "The code received by email",
    value: { session_token: EXAMPLE.sessionToken, otps: { email: EXAMPLE.otpCode } },
  },
};

/** `POST /api/v1/otp/resend`: the token comes from the send's answer. */
export const RESEND_OTP_EXAMPLES: RequestExamples = {
  resend: { summary: "New codes on the session's channels", value: { session_token: EXAMPLE.sessionToken } },
};
