import assert from "node:assert/strict";
import { draftFromForm, draftTemplate, emptyDraft, parseVariables, validateDraft } from "./template_form.ts";

Deno.test("parseVariables() reads name=value lines, keeps '=' in values and skips lines without a name", () => {
  assert.deepEqual(parseVariables("a=1\r\n b = two words \nurl=https://x.test/?q=1\nno equals\n=orphan\n\n"), {
    a: "1",
    b: "two words",
    url: "https://x.test/?q=1",
  });
});

Deno.test("draftFromForm() keeps the variation rows typed in and drops the spare blank one", () => {
  const draft = draftFromForm({
    key: " k ",
    body: "b",
    variation_country_0: "de",
    variation_body_0: "Hallo",
    variation_country_1: "",
    variation_body_1: "no country",
    variation_country_2: "",
    variation_body_2: "",
  });
  assert.equal(draft.key, "k");
  assert.deepEqual(draft.variations, [["de", "Hallo"], ["", "no country"]]);
  assert.equal(draft.status, "approved");
});

Deno.test("validateDraft() takes what the admin API takes, per channel, and says what is missing", () => {
  const sms = validateDraft("sms", { ...emptyDraft(), key: "k", body: "Hi", variations: [["de", "Hallo"]] });
  assert.deepEqual(sms, { ok: true, input: { body: "Hi", country_variations: { DE: "Hallo" }, status: "approved" } });
  const email = validateDraft("email", { ...emptyDraft(), key: "k", subject: "S", html: "<p>x</p>" });
  assert.deepEqual(email, { ok: true, input: { subject: "S", html: "<p>x</p>", text: undefined, status: "approved" } });
  const rejected = validateDraft("push", { ...emptyDraft(), key: "k", title: "T", body: "B", status: "rejected" });
  assert.equal(rejected.ok && rejected.input.status, "rejected");

  const empty = validateDraft("email", emptyDraft());
  assert.deepEqual(empty.ok ? [] : empty.errors, [
    "Give the template a key: sends name it by this key",
    "The subject is required",
    "The HTML body is required",
  ]);
  const noText = validateDraft("sms", { ...emptyDraft(), key: "k", body: "Hi", variations: [["FR", ""]] });
  assert.deepEqual(noText.ok ? [] : noText.errors, ["The variation for FR needs a text"]);
  const status = validateDraft("push", { ...emptyDraft(), key: "k", title: "T", body: "B", status: "maybe" });
  assert.deepEqual(status.ok ? [] : status.errors, ["Choose an approval status"]);
});

Deno.test("draftTemplate() is the stored shape a send reads: channel fields only, countries upper-cased", () => {
  const t = draftTemplate("sms", "team", {
    ...emptyDraft(),
    key: "k",
    subject: "ignored",
    body: "Hi",
    variations: [["de", "Hallo"], ["", "orphan"]],
  });
  assert.deepEqual([t.subject, t.body, t.country_variations, t.category], [null, "Hi", { DE: "Hallo" }, null]);
  const w = draftTemplate("whatsapp", "team", { ...emptyDraft(), key: "k", body: "{{1}}", category: "BOGUS" });
  assert.equal(w.category, null);
});
