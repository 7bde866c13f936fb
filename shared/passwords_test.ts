import assert from "node:assert/strict";
import { hashPassword, verifyNobody, verifyPassword } from "./passwords.ts";

Deno.test("hashPassword() stores argon2id with OWASP parameters and a fresh salt each time", async () => {
  const [a, b] = await Promise.all([hashPassword("correct horse battery"), hashPassword("correct horse battery")]);
  assert.match(a, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.notEqual(a, b);
  assert.ok(!a.includes("correct horse"));
});

Deno.test("verifyPassword() accepts the password and refuses any other or a malformed hash", async () => {
  const hash = await hashPassword("correct horse battery");
  assert.equal(await verifyPassword("correct horse battery", hash), true);
  assert.equal(await verifyPassword("correct horse batterY", hash), false);
  assert.equal(await verifyPassword("correct horse battery", hash.slice(0, -2)), false);
  assert.equal(await verifyPassword("correct horse battery", "plain"), false);
});

Deno.test("verifyPassword() checks with the parameters stored in the hash", async () => {
  // A hash made with other (weaker, older) parameters still verifies.
  const { argon2id } = await import("hash-wasm");
  const salt = new Uint8Array(16).fill(7);
  const old = await argon2id({
    password: "an older password",
    salt,
    memorySize: 1024,
    iterations: 1,
    parallelism: 1,
    hashLength: 16,
    outputType: "encoded",
  });
  assert.equal(await verifyPassword("an older password", old), true);
  assert.equal(await verifyPassword("another password", old), false);
});

Deno.test("verifyNobody() takes about as long as a real check and never matches", async () => {
  const hash = await hashPassword("correct horse battery");
  await verifyNobody("warm up the dummy hash");
  let started = performance.now();
  await verifyPassword("a wrong password", hash);
  const real = performance.now() - started;
  started = performance.now();
  assert.equal(await verifyNobody("a wrong password"), false);
  const nobody = performance.now() - started;
  assert.ok(nobody > real / 3 && nobody < real * 3, `${nobody} ms vs ${real} ms`);
});
