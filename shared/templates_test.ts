import assert from "node:assert/strict";
import { MAX_RENDERED_CHARS, render } from "./templates.ts";

Deno.test("render() fills named and numbered placeholders and reports missing ones", () => {
  assert.deepEqual(render("Hi {{ first }}, code {{1}} {{nope}}!", { first: "Ada", 1: 42 }), {
    text: "Hi Ada, code 42 !",
    missing: ["nope"],
  });
});

Deno.test("render() reads only the variables' own properties: {{constructor}} is missing, not Object", () => {
  assert.deepEqual(render("[{{constructor}}][{{toString}}]", {}), {
    text: "[][]",
    missing: ["constructor", "toString"],
  });
  assert.deepEqual(render("{{constructor}}", { constructor: "mine" }), { text: "mine", missing: [] });
});

Deno.test("render() stops filling a text that would be over MAX_RENDERED_CHARS and says so", () => {
  const big = "A".repeat(100_000);
  const out = render("{{x}}".repeat(1_000), { x: big });
  assert.equal(out.tooLarge, true);
  assert.ok(out.text.length <= MAX_RENDERED_CHARS);
  assert.equal(render("{{x}}".repeat(9), { x: big }).tooLarge, undefined, "900,000 characters are fine");
});
