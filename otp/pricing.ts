import type { Config } from "../shared/config.ts";
import { toMicros } from "../shared/money.ts";
import { smsSegments } from "../shared/sms_segments.ts";
import type { OtpChannel } from "./codes.ts";

/** What delivering one OTP message costs, in micro-dollars (SMS per segment, WhatsApp authentication). */
export function deliveryCost(config: Config, channel: OtpChannel, text: string): number {
  switch (channel) {
    case "email":
      return toMicros(config.PRICE_EMAIL);
    case "sms":
      return toMicros(config.PRICE_SMS_SEGMENT) * smsSegments(text).segments;
    case "whatsapp":
      return toMicros(config.PRICE_WHATSAPP_AUTHENTICATION);
  }
}

/** The verification fee charged once per session, up front, in micro-dollars. */
export function verificationFee(config: Config): number {
  return toMicros(config.PRICE_OTP_VERIFICATION);
}
