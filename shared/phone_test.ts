import assert from "node:assert/strict";
import { countryOfE164, isE164 } from "./phone.ts";

Deno.test("isE164() accepts a plus, a non-zero digit and at most 15 digits", () => {
  assert.equal(isE164("+14155550123"), true);
  assert.equal(isE164("+447911123456"), true);
  assert.equal(isE164("14155550123"), false);
  assert.equal(isE164("+04155550123"), false);
  assert.equal(isE164("+1 415 555 0123"), false);
  assert.equal(isE164("+1234567890123456"), false);
  assert.equal(isE164("+1"), false);
});

Deno.test("countryOfE164() finds the country by the longest known calling code", () => {
  assert.equal(countryOfE164("+447911123456"), "GB");
  assert.equal(countryOfE164("+33612345678"), "FR");
  assert.equal(countryOfE164("+353861234567"), "IE");
  assert.equal(countryOfE164("+919812345678"), "IN");
  assert.equal(countryOfE164("+14155550123"), "US");
  assert.equal(countryOfE164("+14165550123"), "CA");
  assert.equal(countryOfE164("+999123456"), undefined);
  assert.equal(countryOfE164("not a number"), undefined);
});
