/** Messages and assertions the provider clients' tests share. */
import assert from "node:assert/strict";
import { ulid } from "ulid";
import { type OutboundMessage, ProviderError } from "./types.ts";

/** An email from a named sender to a new address, with HTML and text. */
export function randomEmailMessage(): OutboundMessage {
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "email",
    to: `user.${crypto.randomUUID().slice(0, 8)}@example.com`,
    from: "news@example.com",
    fromName: "Acme News",
    subject: "Hello",
    html: "<p>Hi</p>",
    text: "Hi there",
  };
}

/** An SMS to a new UK mobile number (E.164). */
export function randomSmsMessage(): OutboundMessage {
  const n = crypto.getRandomValues(new Uint32Array(1))[0] % 10_000_000;
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "sms",
    to: `+4477009${String(n).padStart(7, "0")}`,
    from: "+15005550006",
    text: `Your code is ${n}`,
  };
}

/** The ProviderError `promise` rejects with (fails the test when it resolves or throws something else). */
export async function providerErrorOf(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(() => undefined, (e) => e);
  assert.ok(error instanceof ProviderError, String(error));
  return error;
}
