import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { dbTest, testDeps } from "../testing.ts";
import { TAGS } from "./openapi.ts";

interface Operation {
  tags?: string[];
  summary?: string;
  description?: string;
  parameters?: { name: string; in: string; required?: boolean }[];
  requestBody?: { content: Record<string, { examples?: Record<string, unknown> }> };
}

async function document() {
  const app = createService(await testDeps());
  return await (await app.request("/api/v1/openapi.json")).json();
}

function operations(doc: { paths: Record<string, Record<string, Operation>> }): [string, Operation][] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, Operation])
  );
}

/** The operations that send or trigger (DESIGN.md, wire conventions). */
const SENDS = [
  "POST /api/v1/messages/send",
  "POST /api/v1/sms/send",
  "POST /api/v1/whatsapp/send",
  "POST /api/v1/push/send",
  "POST /api/v1/messages/trigger",
  "POST /api/v1/otp/send",
  "POST /api/v1/events/send",
  "POST /api/v1/workflows/trigger",
  "POST /api/v1/workflows/send",
];

/** Tags whose operations with a body show request examples. */
const EXAMPLE_TAGS = new Set(["Email", "SMS", "WhatsApp", "Push", "Multi-channel", "OTP", "Workflows", "Events"]);

const header = (op: Operation, name: string) => op.parameters?.find((p) => p.in === "header" && p.name === name);

dbTest("the OpenAPI document opens with a guide to keys, test keys, errors, idempotency and rate limits", async () => {
  const doc = await document();
  for (const section of ["Authentication", "Test keys", "Errors", "Idempotency", "Rate limits"]) {
    assert.match(doc.info.description, new RegExp(`^## ${section}$`, "m"));
  }
});

dbTest("the OpenAPI document lists its tags in reading order, and every operation has one of them", async () => {
  const doc = await document();
  const names = TAGS.map((t) => t.name);
  assert.deepEqual(doc.tags.map((t: { name: string }) => t.name), names);
  assert.ok(doc.tags.every((t: { description: string }) => t.description.length > 20));
  assert.deepEqual(doc["x-tagGroups"].flatMap((g: { tags: string[] }) => g.tags), names);
  assert.deepEqual(names.slice(-2), ["Inbound callbacks", "Admin"]);
  for (const [op, { tags }] of operations(doc)) {
    assert.equal(tags?.length, 1, `${op} has one tag`);
    assert.ok(names.includes(tags![0] as never), `${op}: tag ${tags![0]} is in the list`);
  }
});

dbTest("every operation of the OpenAPI document has a summary and a description", async () => {
  const doc = await document();
  const bare = operations(doc).filter(([, op]) => !op.summary || !op.description || op.description.length < 20);
  assert.deepEqual(bare.map(([op]) => op), []);
});

dbTest("the OpenAPI document declares Idempotency-Key on sends and X-Team-ID on every API-key operation", async () => {
  const doc = await document();
  const ops = new Map(operations(doc));
  for (const send of SENDS) assert.ok(header(ops.get(send)!, "Idempotency-Key"), `${send} declares Idempotency-Key`);
  assert.equal(header(ops.get("POST /api/v1/events/send")!, "X-Team-ID")?.required, true);
  for (const [op, definition] of ops) {
    const keyed = op.includes(" /api/v1/") && !op.includes("/inbound/");
    assert.equal(Boolean(header(definition, "X-Team-ID")), keyed, `${op}: X-Team-ID declared when it takes a key`);
    if (op !== "POST /api/v1/events/send" && keyed) assert.equal(header(definition, "X-Team-ID")?.required, false);
  }
});

dbTest(
  "the OpenAPI document declares X-Contact-Token on exactly the operations a publishable key may call",
  async () => {
    const doc = await document();
    const declaring = operations(doc).filter(([, op]) => header(op, "X-Contact-Token")).map(([op]) => op).sort();
    assert.deepEqual(declaring, [
      "DELETE /api/v1/contacts/external/{external_id}/preferences",
      "DELETE /api/v1/contacts/external/{external_id}/preferences/{channel}",
      "DELETE /api/v1/contacts/{id}/preferences",
      "DELETE /api/v1/contacts/{id}/preferences/{channel}",
      "GET /api/v1/contacts/external/{external_id}",
      "GET /api/v1/contacts/external/{external_id}/preferences",
      "GET /api/v1/contacts/{id}",
      "GET /api/v1/contacts/{id}/preferences",
      "PATCH /api/v1/contacts/external/{external_id}/device-token",
      "PATCH /api/v1/contacts/external/{external_id}/preferences",
      "PATCH /api/v1/contacts/external/{external_id}/preferences/{channel}/{category}",
      "PATCH /api/v1/contacts/{id}/preferences",
      "PATCH /api/v1/contacts/{id}/preferences/{channel}/{category}",
      "POST /api/v1/contacts",
      "POST /api/v1/contacts/external/{external_id}/preferences/subscribe-all",
      "POST /api/v1/contacts/{id}/preferences/subscribe-all",
      "POST /api/v1/events/send",
      "PUT /api/v1/contacts/external/{external_id}/preferences",
      "PUT /api/v1/contacts/{id}/preferences",
    ]);
  },
);

dbTest("every send, OTP, event and workflow operation with a body shows request examples", async () => {
  const doc = await document();
  const missing = operations(doc).filter(([, op]) =>
    EXAMPLE_TAGS.has(op.tags![0]) && op.requestBody &&
    Object.keys(op.requestBody.content["application/json"]?.examples ?? {}).length === 0
  );
  assert.deepEqual(missing.map(([op]) => op), []);
});
