import assert from "node:assert/strict";
import { isBase64Key } from "./config.ts";
import { generateSecretKey, importSecretKey, seal, unseal } from "./secret_box.ts";

Deno.test("seal() and unseal() round-trip a value, and the ciphertext holds none of it", async () => {
  const key = await importSecretKey(generateSecretKey());
  const secret = { auth_token: "0123456789abcdef0123456789abcdef" };
  const sealed = await seal(key, secret, "team-a/sms/twilio");
  assert.equal(new TextDecoder().decode(sealed.ciphertext).includes("0123456789abcdef"), false);
  assert.deepEqual(await unseal(key, sealed, "team-a/sms/twilio"), secret);
  const again = await seal(key, secret, "team-a/sms/twilio");
  assert.notDeepEqual(again.iv, sealed.iv, "a fresh IV per value");
});

Deno.test("unseal() refuses another key and another row's context", async () => {
  const key = await importSecretKey(generateSecretKey());
  const sealed = await seal(key, { password: "p" }, "team-a/email/smtp");
  await assert.rejects(unseal(key, sealed, "team-b/email/smtp"));
  await assert.rejects(unseal(await importSecretKey(generateSecretKey()), sealed, "team-a/email/smtp"));
});

Deno.test("isBase64Key() accepts the base64 of 32 bytes only", () => {
  assert.equal(isBase64Key(generateSecretKey()), true);
  assert.equal(isBase64Key(btoa("x".repeat(31))), false);
  assert.equal(isBase64Key(btoa("x".repeat(33))), false);
  assert.equal(isBase64Key("not base64 at all, not base64 at all, not b="), false);
});
