import assert from "node:assert/strict";
import { jwtVerify, SignJWT, UnsecuredJWT } from "jose";
import { readSessionToken, signSessionToken } from "./token.ts";

function key(): Uint8Array {
  return crypto.getRandomValues(new Uint8Array(32));
}

const claims = { sessionId: "0b6f4c1e-5a0e-4d8e-9b8e-2f1c3d4e5f60", teamId: "team-1" };

Deno.test("signSessionToken() makes a standard HS256 JWT: jose verifies it, and it reads back", async () => {
  const k = key();
  const now = Date.now();
  const token = signSessionToken(k, claims, now);
  const { payload, protectedHeader } = await jwtVerify(token, k, { algorithms: ["HS256"] });
  assert.deepEqual(protectedHeader, { alg: "HS256", typ: "JWT" });
  assert.deepEqual(payload, { tid: claims.teamId, sub: claims.sessionId, iat: Math.floor(now / 1000) });
  assert.deepEqual(readSessionToken(k, token), claims);
});

Deno.test("readSessionToken() reads a token jose signed with the same header and key", async () => {
  const k = key();
  const token = await new SignJWT({ tid: claims.teamId }).setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(claims.sessionId).setIssuedAt().sign(k);
  assert.deepEqual(readSessionToken(k, token), claims);
});

Deno.test("readSessionToken() refuses another key, a changed payload or signature, other headers and garbage", async () => {
  const k = key();
  const token = signSessionToken(k, claims, Date.now());
  assert.equal(readSessionToken(key(), token), undefined);
  const [h, p, s] = token.split(".");
  const forged = btoa(JSON.stringify({ sub: claims.sessionId, tid: "team-2", iat: 1 })).replace(/=+$/, "");
  assert.equal(readSessionToken(k, `${h}.${forged}.${s}`), undefined);
  const flipped = s.slice(0, -2) + (s.at(-2) === "A" ? "B" : "A") + s.at(-1);
  assert.equal(readSessionToken(k, `${h}.${p}.${flipped}`), undefined);
  assert.equal(readSessionToken(k, `${h}.${p}.${s}x`), undefined);
  assert.equal(readSessionToken(k, `${h}.${p}`), undefined);
  const none = new UnsecuredJWT({ tid: "team-1" }).setSubject(claims.sessionId).encode();
  assert.equal(readSessionToken(k, none), undefined);
  const otherHeader = await new SignJWT({ tid: "team-1" }).setProtectedHeader({ alg: "HS256" }).setSubject("x").sign(k);
  assert.equal(readSessionToken(k, otherHeader), undefined);
  const noTeam = await new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setSubject("x").sign(k);
  assert.equal(readSessionToken(k, noTeam), undefined);
  const notJson = signSessionToken(k, claims, 0).split(".")[0] + ".bm90IGpzb24";
  assert.equal(readSessionToken(k, `${notJson}.${signSessionToken(k, claims, 0).split(".")[2]}`), undefined);
  assert.equal(readSessionToken(k, "garbage"), undefined);
  assert.equal(readSessionToken(k, ""), undefined);
});
