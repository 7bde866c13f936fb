import assert from "node:assert/strict";
import type { Template } from "../templates.ts";
import { renderContent, unfilledVariables } from "./render.ts";
import type { Content } from "./spec.ts";

function template(fields: Partial<Template>): Template {
  return {
    id: crypto.randomUUID(),
    team_id: crypto.randomUUID(),
    channel: "sms",
    key: "k",
    subject: null,
    html: null,
    text: null,
    title: null,
    body: null,
    category: null,
    country_variations: null,
    status: "approved",
    created_at: new Date(),
    updated_at: new Date(),
    ...fields,
  };
}

const contact = {
  first_name: "Ann",
  last_name: "Lee",
  external_id: "ext-1",
  email: "ann@example.com",
  phone: "+447700900123",
};
const ALL = "{{contact_first_name}}|{{contact_last_name}}|{{contact_external_id}}|{{contact_phone}}|{{contact_email}}";

Deno.test("renderContent() fills the contact variables of each channel, and the send's variables win", () => {
  const cases: [Content, Partial<Template>, string][] = [
    [{ channel: "sms", template_key: "k", category: "transactional" }, { body: ALL }, "Ann|Lee|ext-1|+447700900123|"],
    [
      { channel: "whatsapp", template_key: "k", conversation_category: "UTILITY" },
      { channel: "whatsapp", body: ALL },
      "Ann|Lee|ext-1|+447700900123|",
    ],
    [{ channel: "push", title: "t", body: ALL, category: "transactional" }, {}, "Ann|Lee|ext-1||ann@example.com"],
  ];
  for (const [content, fields, expected] of cases) {
    const t = content.channel === "push" ? undefined : template(fields);
    const rendered = renderContent(content, t, {}, contact, "GB");
    assert.ok(rendered.ok);
    assert.equal(rendered.text, expected, content.channel);
    const overridden = renderContent(content, t, { contact_first_name: "Bob", contact_phone: "+1" }, contact, "GB");
    assert.ok(overridden.ok);
    assert.equal(overridden.text!.split("|")[0], "Bob", content.channel);
    if (content.channel !== "push") assert.equal(overridden.text!.split("|")[3], "+1", content.channel);
  }
  const email = renderContent(
    { channel: "email", subject: ALL, category: "transactional" },
    undefined,
    {},
    contact,
  );
  assert.ok(email.ok);
  assert.equal(email.subject, "Ann|Lee|ext-1||ann@example.com");
});

Deno.test("renderContent() reports missing variables and fills WhatsApp's numbered placeholders", () => {
  const rendered = renderContent(
    { channel: "whatsapp", template_key: "k", conversation_category: "UTILITY" },
    template({ channel: "whatsapp", body: "Hi {{1}}, {{2}} {{nope}}" }),
    { "1": "Ann", "2": 42 },
    {},
  );
  assert.ok(rendered.ok);
  assert.equal(rendered.text, "Hi Ann, 42 ");
  assert.deepEqual(rendered.missing, ["nope"]);
});

Deno.test("renderContent() serves an SMS template's variations to their countries only", () => {
  const t = template({ body: "unused", country_variations: { GB: "Hello", JM: "Wah gwaan" } });
  const content: Content = { channel: "sms", template_key: "k", category: "transactional" };
  const gb = renderContent(content, t, {}, {}, "GB");
  assert.ok(gb.ok);
  assert.equal(gb.text, "Hello");
  assert.deepEqual(renderContent(content, t, {}, {}, "US"), {
    ok: false,
    error: "No SMS template variation for country US",
    missing: [],
  });
  const unknown = renderContent(content, t, {}, {}, undefined);
  assert.ok(!unknown.ok);
  assert.equal(unknown.error, "No SMS template variation for country of this number (unknown)");
  const plain = renderContent(content, template({ body: "Plain" }), {}, {}, "US");
  assert.ok(plain.ok);
  assert.equal(plain.text, "Plain");
});

Deno.test("unfilledVariables() names what a direct send leaves empty, and for contacts what no contact fills", () => {
  const sms = template({ body: "Hi {{contact_first_name}} {{contact_last_name}}, code {{code}} {{ code }}" });
  const content: Content = { channel: "sms", template_key: "k", category: "transactional" };
  const direct = { type: "direct" as const, address: "+14155550123", first_name: "Ann" };
  assert.deepEqual(unfilledVariables(content, sms, {}, direct), ["contact_last_name", "code"]);
  assert.deepEqual(unfilledVariables(content, sms, { code: 1, contact_last_name: "Lee" }, direct), []);
  // A contact or a fan-out: only what no contact variable of the channel can fill.
  for (const recipient of [{ type: "contact" as const, contact_id: "c", external_id: "e" }, { type: "all" as const }]) {
    assert.deepEqual(unfilledVariables(content, sms, {}, recipient), ["code"]);
  }
  // contact_email is a contact variable of push and email, not of SMS.
  const email = template({ channel: "email", subject: "Hi {{contact_email}}", html: "<p>{{contact_phone}}</p>" });
  const emailContent: Content = { channel: "email", template_key: "k", category: "transactional" };
  assert.deepEqual(unfilledVariables(emailContent, email, {}, { type: "all" }), ["contact_phone"]);
});
