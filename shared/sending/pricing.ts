import type { Config } from "../config.ts";
import { ValidationError } from "../errors.ts";
import { toMicros, toUsd } from "../money.ts";
import { smsSegments } from "../sms_segments.ts";
import type { Content } from "./spec.ts";

/** What one rendered message of `content` costs, in micro-dollars: SMS per segment, WhatsApp per category. */
export function messageCost(config: Config, content: Content, text: string | undefined): number {
  switch (content.channel) {
    case "email":
      return toMicros(config.PRICE_EMAIL);
    case "push":
      return toMicros(config.PRICE_PUSH);
    case "sms":
      return toMicros(config.PRICE_SMS_SEGMENT) * smsSegments(text ?? "").segments;
    case "whatsapp":
      return whatsappPrice(config, content.conversation_category);
  }
}

/** The price of one WhatsApp message of a conversation category, in micro-dollars. */
export function whatsappPrice(config: Config, category: "MARKETING" | "UTILITY" | "AUTHENTICATION"): number {
  switch (category) {
    case "MARKETING":
      return toMicros(config.PRICE_WHATSAPP_MARKETING);
    case "UTILITY":
      return toMicros(config.PRICE_WHATSAPP_UTILITY);
    case "AUTHENTICATION":
      return toMicros(config.PRICE_WHATSAPP_AUTHENTICATION);
  }
}

/** The failure reason of a message the wallet could not pay for. */
export const UNPAID_REASON = "Insufficient wallet balance";

/** 400 'Insufficient wallet balance. Required: X, Available: Y' (USD), before a send is queued. */
export function insufficientBalanceError(requiredMicros: number, availableMicros: number): ValidationError {
  const required = toUsd(requiredMicros);
  const available = toUsd(availableMicros);
  return new ValidationError(
    `Insufficient wallet balance. Required: ${required}, Available: ${available}`,
    "insufficient_balance",
    { details: { required, available, currency: "USD" } },
  );
}
