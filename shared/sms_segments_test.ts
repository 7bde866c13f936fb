import assert from "node:assert/strict";
import { smsSegments } from "./sms_segments.ts";

Deno.test("smsSegments() bills a GSM-7 text of up to 160 characters as one segment", () => {
  assert.deepEqual(smsSegments("a".repeat(160)), { encoding: "GSM-7", units: 160, segments: 1 });
  assert.deepEqual(smsSegments(""), { encoding: "GSM-7", units: 0, segments: 1 });
});

Deno.test("smsSegments() splits a longer GSM-7 text into parts of 153", () => {
  assert.equal(smsSegments("a".repeat(161)).segments, 2);
  assert.equal(smsSegments("a".repeat(306)).segments, 2);
  assert.equal(smsSegments("a".repeat(307)).segments, 3);
});

Deno.test("smsSegments() counts extension characters as two septets and never cuts one", () => {
  assert.deepEqual(smsSegments("€".repeat(80)), { encoding: "GSM-7", units: 160, segments: 1 });
  assert.equal(smsSegments("€".repeat(81)).segments, 2);
  // 152 single septets then an escape: the escape does not fit in the first part's last septet.
  assert.equal(smsSegments("a".repeat(152) + "{" + "a".repeat(152)).segments, 3);
  assert.equal(smsSegments("a".repeat(151) + "{" + "a".repeat(153)).segments, 2);
});

Deno.test("smsSegments() uses UCS-2 (70, then 67 a part) once a character is outside GSM-7", () => {
  assert.deepEqual(smsSegments("ж".repeat(70)), { encoding: "UCS-2", units: 70, segments: 1 });
  assert.equal(smsSegments("ж".repeat(71)).segments, 2);
  assert.equal(smsSegments("ж".repeat(134)).segments, 2);
  assert.equal(smsSegments("ж".repeat(135)).segments, 3);
  assert.equal(smsSegments("Hello 👋").encoding, "UCS-2");
});

Deno.test("smsSegments() counts an emoji as two code units and keeps the pair in one part", () => {
  assert.deepEqual(smsSegments("😀".repeat(35)), { encoding: "UCS-2", units: 70, segments: 1 });
  // 66 units then a pair: the pair moves to the next part.
  assert.equal(smsSegments("ж".repeat(66) + "😀" + "ж".repeat(65)).segments, 2);
  assert.equal(smsSegments("ж".repeat(66) + "😀" + "ж".repeat(66)).segments, 3);
});

Deno.test("smsSegments() treats ç (not in GSM-7; only Ç is) as UCS-2", () => {
  assert.equal(smsSegments("Ça va").encoding, "GSM-7");
  assert.equal(smsSegments("ça va").encoding, "UCS-2");
});
