import assert from "node:assert/strict";
import { countryOfE164, e164Of, isE164 } from "./phone.ts";

Deno.test("isE164() accepts a plus, a non-zero digit and at most 15 digits", () => {
  assert.equal(isE164("+14155550123"), true);
  assert.equal(isE164("+447911123456"), true);
  assert.equal(isE164("14155550123"), false);
  assert.equal(isE164("+04155550123"), false);
  assert.equal(isE164("+1 415 555 0123"), false);
  assert.equal(isE164("+1234567890123456"), false);
  assert.equal(isE164("+1"), false);
});

Deno.test("countryOfE164() finds the country by the longest prefix: a calling code or a country within one", () => {
  assert.equal(countryOfE164("+447911123456"), "GB");
  assert.equal(countryOfE164("+33612345678"), "FR");
  assert.equal(countryOfE164("+353861234567"), "IE");
  assert.equal(countryOfE164("+919812345678"), "IN");
  assert.equal(countryOfE164("+14155550123"), "US");
  assert.equal(countryOfE164("+14165550123"), "CA");
  // Several countries within one code: the North American plan by area code, Kazakhstan within +7,
  // and smaller territories by the prefix their numbers start with.
  assert.equal(countryOfE164("+18765550123"), "JM");
  assert.equal(countryOfE164("+18295550123"), "DO");
  assert.equal(countryOfE164("+17875550123"), "PR");
  assert.equal(countryOfE164("+12425550123"), "BS");
  assert.equal(countryOfE164("+18005550123"), "US");
  assert.equal(countryOfE164("+77011234567"), "KZ");
  assert.equal(countryOfE164("+79161234567"), "RU");
  assert.equal(countryOfE164("+390669812345"), "VA");
  assert.equal(countryOfE164("+390612345678"), "IT");
  assert.equal(countryOfE164("+262269612345"), "YT");
  assert.equal(countryOfE164("+262262123456"), "RE");
  assert.equal(countryOfE164("+59971234567"), "BQ");
  assert.equal(countryOfE164("+59995123456"), "CW");
  // Every assigned code, not only common ones.
  assert.equal(countryOfE164("+381601234567"), "RS");
  assert.equal(countryOfE164("+2348031234567"), "NG");
  assert.equal(countryOfE164("+8613812345678"), "CN");
  assert.equal(countryOfE164("+5491112345678"), "AR");
  assert.equal(countryOfE164("+6591234567"), "SG");
  assert.equal(countryOfE164("+97312345678"), "BH");
  assert.equal(countryOfE164("+6901234"), "TK");
  assert.equal(countryOfE164("+999123456"), undefined);
  assert.equal(countryOfE164("+2591234567"), undefined);
  assert.equal(countryOfE164("not a number"), undefined);
});

Deno.test("e164Of() reads custom_fields.phone as the worker sends to it, and refuses what names no number", () => {
  assert.equal(e164Of("+44 7700 900-123"), "+447700900123");
  assert.equal(e164Of("0044 (7700) 900.123"), "+447700900123");
  assert.equal(e164Of("+14155550123"), "+14155550123");
  for (const bad of ["4155550123", "", "+0123", "phone", 14155550123, null, undefined, { n: 1 }]) {
    assert.equal(e164Of(bad), undefined, String(bad));
  }
});
