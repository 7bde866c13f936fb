import assert from "node:assert/strict";
import { isEmail, MAX_EMAIL_LENGTH } from "./email.ts";

Deno.test("isEmail() takes plausible addresses and refuses the rest", () => {
  for (const ok of ["a@b.co", "first.last+tag@mail.example.com", "x@sub.domain.io"]) {
    assert.equal(isEmail(ok), true, ok);
  }
  for (const bad of ["", "a", "a@b", "a@b.", "a@.b", "a@b..c", "a b@c.de", "<a@b.co>", "a@@b.co", "@b.co"]) {
    assert.equal(isEmail(bad), false, bad);
  }
  assert.equal(isEmail(`${"a".repeat(MAX_EMAIL_LENGTH - 7)}@b.co.uk`), false, "over 254 characters");
});

/**
 * Runs hasEmailShape() on each input in a worker and answers its results, or rejects once `ms` have
 * passed: a pattern that backtracks cannot be interrupted on the test's own thread, only terminated.
 */
function shapesWithin(inputs: string[], ms: number): Promise<boolean[]> {
  const source = `import { hasEmailShape } from ${JSON.stringify(new URL("./email.ts", import.meta.url).href)};
self.onmessage = (e) => self.postMessage(e.data.map(hasEmailShape));`;
  const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "text/javascript" })), { type: "module" });
  const { promise, resolve, reject } = Promise.withResolvers<boolean[]>();
  const timer = setTimeout(() => reject(new Error(`hasEmailShape() took over ${ms} ms: the pattern backtracks`)), ms);
  worker.onmessage = (e) => resolve(e.data);
  worker.onerror = (e) => reject(e.error ?? new Error(e.message));
  worker.postMessage(inputs);
  return promise.finally(() => {
    clearTimeout(timer);
    worker.terminate();
  });
}

Deno.test("hasEmailShape() is linear: input built to make a pattern backtrack is refused at once", async () => {
  // `@[^\s@<>]+\.[^\s@<>]+$` backtracked on the first of these for 38 s: a regression fails here after 10 s.
  const inputs = [`a@${"a.".repeat(150_000)} `, `a@${"a.".repeat(150_000)}a`];
  assert.deepEqual(await shapesWithin(inputs, 10_000), [false, true]);
});
