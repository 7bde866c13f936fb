import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { contactToken, contactTokenFits, newContactTokenSecret } from "./contact_tokens.ts";

Deno.test("contactToken() gives the test vectors of docs/contact-tokens.md", async () => {
  const doc = await Deno.readTextFile(new URL("../docs/contact-tokens.md", import.meta.url));
  const secret = /^secret: +(\S+)$/m.exec(doc)?.[1];
  assert.ok(secret, "the guide states a secret");
  const pairs = [...doc.matchAll(/^external id: +(\S+)\ntoken: +(\S+)$/gm)];
  assert.equal(pairs.length, 2);
  for (const [, externalId, token] of pairs) {
    assert.equal(await contactToken(secret, externalId), token, externalId);
    assert.equal(createHmac("sha256", secret).update(externalId, "utf8").digest("hex"), token);
  }
});

Deno.test("contactTokenFits() takes the token of that external id only", async () => {
  const secret = newContactTokenSecret();
  const token = await contactToken(secret, "user_42");
  assert.match(token, /^[0-9a-f]{64}$/);
  assert.equal(await contactTokenFits(secret, "user_42", token), true);
  assert.equal(await contactTokenFits(secret, "user_42", token.toUpperCase()), true);
  assert.equal(await contactTokenFits(secret, "user_43", token), false);
  assert.equal(await contactTokenFits(newContactTokenSecret(), "user_42", token), false);
  assert.equal(await contactTokenFits(secret, "user_42", token.slice(0, 63)), false);
  assert.equal(await contactTokenFits(secret, "user_42", `${token.slice(0, 63)}g`), false);
  assert.equal(await contactTokenFits(secret, "user_42", ""), false);
});

Deno.test("newContactTokenSecret() makes a new secret each call", () => {
  const a = newContactTokenSecret();
  assert.match(a, /^cts_[0-9A-Za-z]{40}$/);
  assert.notEqual(a, newContactTokenSecret());
});
