import assert from "node:assert/strict";
import { hasEmailShape, isEmail, MAX_EMAIL_LENGTH } from "./email.ts";

Deno.test("isEmail() takes plausible addresses and refuses the rest", () => {
  for (const ok of ["a@b.co", "first.last+tag@mail.example.com", "x@sub.domain.io"]) {
    assert.equal(isEmail(ok), true, ok);
  }
  for (const bad of ["", "a", "a@b", "a@b.", "a@.b", "a@b..c", "a b@c.de", "<a@b.co>", "a@@b.co", "@b.co"]) {
    assert.equal(isEmail(bad), false, bad);
  }
  assert.equal(isEmail(`${"a".repeat(MAX_EMAIL_LENGTH - 7)}@b.co.uk`), false, "over 254 characters");
});

Deno.test("hasEmailShape() is linear: input built to make a pattern backtrack is refused at once", () => {
  // `[^@]+\.[^@]+` backtracked on this for 38 s; were the pattern to regress, this test would hang.
  assert.equal(hasEmailShape(`a@${"a.".repeat(150_000)} `), false);
  assert.equal(hasEmailShape(`a@${"a.".repeat(150_000)}a`), true);
});
