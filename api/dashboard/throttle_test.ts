import assert from "node:assert/strict";
import { hotStateDeps } from "../../shared/deps.ts";
import { engineTest } from "../../shared/engine/testing.ts";
import { randomEmail, testDeps } from "../../shared/testing.ts";
import { randomIp } from "./testing.ts";
import { ACCOUNT_FAILURES, countSignInFailure, signInLockedUntil } from "./throttle.ts";

engineTest(
  "an account locked by failures on one replica is locked on another until the window moves",
  async (engine) => {
    const base = await testDeps();
    const one = { ...base, ...hotStateDeps(engine.hot) };
    const other = { ...base, ...hotStateDeps(engine.another()) };
    const email = randomEmail("throttle");
    const now = Date.now();
    for (let i = 0; i < ACCOUNT_FAILURES - 1; i++) await countSignInFailure(one, email, randomIp(), now + i);
    assert.equal(await signInLockedUntil(other, email, randomIp(), now + 10), undefined, "not yet");
    await countSignInFailure(one, email.toUpperCase(), randomIp(), now + 10);
    const until = await signInLockedUntil(other, ` ${email} `, randomIp(), now + 11);
    assert.ok(until !== undefined && until > now + 11, "the other replica sees the lock");
    assert.equal(await signInLockedUntil(other, email, randomIp(), until), undefined, "over once the window moved");
  },
);
