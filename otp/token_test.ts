import assert from "node:assert/strict";
import { SignJWT, UnsecuredJWT } from "jose";
import { readSessionToken, signSessionToken } from "./token.ts";

async function key(): Promise<CryptoKey> {
  const raw = crypto.getRandomValues(new Uint8Array(32));
  return await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign", "verify"]);
}

const claims = { sessionId: "0b6f4c1e-5a0e-4d8e-9b8e-2f1c3d4e5f60", teamId: "team-1" };

Deno.test("signSessionToken() makes an HS256 JWT that readSessionToken() reads back", async () => {
  const k = await key();
  const token = await signSessionToken(k, claims, Date.now());
  const header = JSON.parse(atob(token.split(".")[0].replaceAll("-", "+").replaceAll("_", "/")));
  assert.deepEqual(header, { alg: "HS256", typ: "JWT" });
  assert.deepEqual(await readSessionToken(k, token, Date.now()), claims);
});

Deno.test("readSessionToken() refuses another key, a changed payload, alg none and garbage", async () => {
  const k = await key();
  const token = await signSessionToken(k, claims, Date.now());
  assert.equal(await readSessionToken(await key(), token, Date.now()), undefined);
  const [h, , s] = token.split(".");
  const forged = btoa(JSON.stringify({ sub: claims.sessionId, tid: "team-2", iat: 1 })).replace(/=+$/, "");
  assert.equal(await readSessionToken(k, `${h}.${forged}.${s}`, Date.now()), undefined);
  const none = new UnsecuredJWT({ tid: "team-1" }).setSubject(claims.sessionId).encode();
  assert.equal(await readSessionToken(k, none, Date.now()), undefined);
  const noTeam = await new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject("x").sign(k);
  assert.equal(await readSessionToken(k, noTeam, Date.now()), undefined);
  assert.equal(await readSessionToken(k, "garbage", Date.now()), undefined);
});
