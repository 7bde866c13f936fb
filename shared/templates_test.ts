import assert from "node:assert/strict";
import { render } from "./templates.ts";

Deno.test("render() fills named and numbered placeholders and reports missing ones", () => {
  assert.deepEqual(render("Hi {{ first }}, code {{1}} {{nope}}!", { first: "Ada", 1: 42 }), {
    text: "Hi Ada, code 42 !",
    missing: ["nope"],
  });
});
