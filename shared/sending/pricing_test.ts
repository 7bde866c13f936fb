import assert from "node:assert/strict";
import { parseConfig } from "../config.ts";
import { insufficientBalanceError, messageCost } from "./pricing.ts";

Deno.test("messageCost() charges SMS per segment and WhatsApp per conversation category, from the config", () => {
  const config = parseConfig({
    PRICE_SMS_SEGMENT: "0.01",
    PRICE_WHATSAPP_MARKETING: "0.03",
    PRICE_WHATSAPP_UTILITY: "0.02",
    PRICE_WHATSAPP_AUTHENTICATION: "0.015",
    PRICE_EMAIL: "0.001",
    PRICE_PUSH: "0",
  });
  const sms = { channel: "sms", template_key: "k", category: "transactional" } as const;
  assert.equal(messageCost(config, sms, "a".repeat(160)), 10_000);
  assert.equal(messageCost(config, sms, "a".repeat(161)), 20_000);
  assert.equal(messageCost(config, sms, "é".repeat(160)), 10_000); // é is in GSM-7
  assert.equal(messageCost(config, sms, "ж".repeat(71)), 20_000); // UCS-2: 70, then 67 a part
  assert.equal(messageCost(config, sms, ""), 10_000);
  for (const [category, micros] of [["MARKETING", 30_000], ["UTILITY", 20_000], ["AUTHENTICATION", 15_000]] as const) {
    const whatsapp = { channel: "whatsapp", template_key: "k", conversation_category: category } as const;
    assert.equal(messageCost(config, whatsapp, "anything"), micros, category);
  }
  assert.equal(messageCost(config, { channel: "email", subject: "s", category: "transactional" }, "x"), 1_000);
  assert.equal(messageCost(config, { channel: "push", title: "t", body: "b", category: "transactional" }, "x"), 0);
});

Deno.test("insufficientBalanceError() says what is required and available, in USD", () => {
  const err = insufficientBalanceError(22_500, 7_500);
  assert.equal(err.status, 400);
  assert.equal(err.message, "Insufficient wallet balance. Required: 0.0225, Available: 0.0075");
});
