import assert from "node:assert/strict";
import { codeMatches, generateCode, hashCode } from "./codes.ts";
import { equalText } from "./hmac.ts";

function hmacKey(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(32));
}

Deno.test("generateCode() gives `length` decimal digits, each digit about equally often", () => {
  for (const length of [4, 6, 8]) assert.match(generateCode(length), new RegExp(`^\\d{${length}}$`));
  const counts = new Array(10).fill(0);
  const n = 20_000;
  for (let i = 0; i < n; i++) for (const d of generateCode(5)) counts[Number(d)]++;
  for (const count of counts) assert.ok(Math.abs(count / (n * 5) - 0.1) < 0.006, `digit share ${count / (n * 5)}`);
});

Deno.test("generateCode() rejects bytes of 250 and above instead of folding them (no modulo bias)", () => {
  const original = crypto.getRandomValues;
  let calls = 0;
  crypto.getRandomValues = (<T extends ArrayBufferView>(array: T): T => {
    calls++;
    (array as unknown as Uint8Array).fill(calls === 1 ? 255 : 13);
    return array;
  }) as typeof crypto.getRandomValues;
  try {
    assert.equal(generateCode(6), "333333");
    assert.equal(calls, 2);
  } finally {
    crypto.getRandomValues = original;
  }
});

Deno.test("hashCode() never holds the code and is bound to the session and the channel", () => {
  const key = hmacKey();
  const hash = hashCode(key, "s1", "email", "123456");
  assert.ok(!hash.includes("123456"));
  assert.equal(hash, hashCode(key, "s1", "email", "123456"));
  assert.notEqual(hash, hashCode(key, "s2", "email", "123456"));
  assert.notEqual(hash, hashCode(key, "s1", "sms", "123456"));
  assert.notEqual(hash, hashCode(hmacKey(), "s1", "email", "123456"));
});

Deno.test("codeMatches() accepts only the hashed code, and nothing without a stored hash", () => {
  const key = hmacKey();
  const stored = hashCode(key, "s1", "sms", "0042");
  assert.equal(codeMatches(key, "s1", "sms", "0042", stored), true);
  assert.equal(codeMatches(key, "s1", "sms", "42", stored), false);
  assert.equal(codeMatches(key, "s1", "email", "0042", stored), false);
  assert.equal(codeMatches(key, "s1", "sms", "0042", undefined), false);
});

Deno.test("hashCode() is the base64 HMAC-SHA-256 Web Crypto computes (hashes stored before stay valid)", async () => {
  const raw = hmacKey();
  const key = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode("s1\u0000email\u0000123456"));
  assert.equal(hashCode(raw, "s1", "email", "123456"), btoa(String.fromCharCode(...new Uint8Array(mac))));
});

Deno.test("equalText() compares every character", () => {
  assert.equal(equalText("abc", "abc"), true);
  assert.equal(equalText("abc", "abd"), false);
  assert.equal(equalText("xbc", "abc"), false);
  assert.equal(equalText("ab", "abc"), false);
  assert.equal(equalText("", ""), true);
});
