import assert from "node:assert/strict";
import { parseConfig } from "../shared/config.ts";
import { deliveryCost, verificationFee } from "./pricing.ts";

const config = parseConfig({
  PRICE_SMS_SEGMENT: "0.0075",
  PRICE_WHATSAPP_AUTHENTICATION: "0.0035",
  PRICE_EMAIL: "0.0001",
  PRICE_OTP_VERIFICATION: "0.005",
});

Deno.test("deliveryCost() charges SMS per segment: 160 GSM-7 characters, 153 each when split", () => {
  assert.equal(deliveryCost(config, "sms", "a".repeat(160)), 7_500);
  assert.equal(deliveryCost(config, "sms", "a".repeat(161)), 15_000);
  // Ä, é, £ and ¿ are GSM-7: 100 of them fit one segment; one other character makes it 70 (67).
  assert.equal(deliveryCost(config, "sms", "Äé£¿".repeat(25)), 7_500);
  assert.equal(deliveryCost(config, "sms", "Äé£¿".repeat(25) + "ï"), 15_000);
  assert.equal(deliveryCost(config, "sms", "ж".repeat(135)), 22_500);
});

Deno.test("deliveryCost() charges WhatsApp authentication and email per message; the fee is separate", () => {
  assert.equal(deliveryCost(config, "whatsapp", "x".repeat(500)), 3_500);
  assert.equal(deliveryCost(config, "email", "x".repeat(5000)), 100);
  assert.equal(verificationFee(config), 5_000);
});
