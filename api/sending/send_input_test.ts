import assert from "node:assert/strict";
import { MAX_EMAIL_LENGTH, MAX_ID_LENGTH, MAX_KEY_LENGTH } from "../../shared/http/schemas.ts";
import { UNSTORABLE_TEXT } from "../../shared/http/validation.ts";
import { dbTest } from "../../shared/testing.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { workflowBody, workflowSetup } from "../workflows/testing.ts";

/**
 * A team with a `welcome` template on every channel and a workflow listening to `user_signup`; sends
 * go with the test key (nothing charged) and the team header (events need it).
 */
async function sendSetup() {
  const setup = await workflowSetup();
  await upsertTemplate(setup.deps.sql, setup.team.id, "push", "welcome", { title: "Hi {{name}}", body: "B" });
  const workflow = (await setup.call("POST", "/workflows", workflowBody())).body;
  const send = (path: string, body: unknown) =>
    setup.call("POST", path, body, { "X-API-Key": setup.keys.test, "X-Team-ID": setup.team.id });
  return { ...setup, workflow, send };
}

type Body = Record<string, unknown>;

/** Each send endpoint with a valid body (its variables and metadata given) and its success status. */
function sendBodies(workflowId: string): { path: string; status: number; body: Body }[] {
  const variables = { name: "Zoë 😀", nested: { list: [1, "two", { three: "3" }] } };
  const metadata = { source: "test", tags: ["a"] };
  return [
    {
      path: "/messages/send",
      status: 201,
      body: {
        recipient_type: "direct_email",
        direct_email: "a@example.com",
        template_key: "welcome",
        variables,
        metadata,
      },
    },
    {
      path: "/sms/send",
      status: 201,
      body: {
        template_key: "welcome",
        recipient_type: "direct_sms",
        direct_phone: "+14155550123",
        variables,
        metadata,
      },
    },
    {
      path: "/whatsapp/send",
      status: 201,
      body: {
        template_key: "welcome",
        recipient_type: "direct_whatsapp",
        conversation_category: "UTILITY",
        direct_whatsapp: "+14155550123",
        variables,
        metadata,
      },
    },
    {
      path: "/push/send",
      status: 201,
      body: {
        template_key: "welcome",
        recipient_type: "direct_push",
        direct_device_token: "a".repeat(64),
        direct_platform: "android",
        custom_data: { deep_link: "app://home" },
        variables,
        metadata,
      },
    },
    {
      path: "/messages/trigger",
      status: 200,
      body: { recipient_type: "all", channels: ["email", "sms"], template_key: "welcome", variables, metadata },
    },
    {
      path: "/events/send",
      status: 201,
      body: {
        event_name: "user_signup",
        user_info: { name: "Zoë", custom_fields: { plan: "pro" } },
        source: { type: "api", user_agent: "test" },
        event_data: { order: { id: 1 } },
        variables,
      },
    },
    {
      path: "/workflows/trigger",
      status: 201,
      body: { workflow_id: workflowId, recipient_type: "all", variables, metadata },
    },
    {
      path: "/workflows/send",
      status: 201,
      body: {
        workflow_id: workflowId,
        recipient_type: "all",
        variables,
        channel_variables: { email: { plan: "pro" } },
        steps_override: { "1": { variables: { plan: "max" } } },
        metadata,
      },
    },
  ];
}

/** The body with `value` set at `path` (objects made as needed). */
function withValue(body: Body, path: string[], value: unknown): Body {
  const copy = structuredClone(body);
  let at = copy;
  for (const key of path.slice(0, -1)) {
    at[key] = typeof at[key] === "object" && at[key] !== null ? at[key] : {};
    at = at[key] as Body;
  }
  at[path[path.length - 1]] = value;
  return copy;
}

const UNSTORABLE_ANSWER = {
  statusCode: 400,
  message: UNSTORABLE_TEXT,
  error: "Bad Request",
  code: "invalid_characters",
};

dbTest("every send endpoint accepts well-formed text in variables and metadata (emoji included)", async () => {
  const { send, workflow } = await sendSetup();
  for (const { path, status, body } of sendBodies(workflow.id)) {
    const res = await send(path, body);
    assert.equal(res.status, status, `${path}: ${JSON.stringify(res.body)}`);
  }
});

dbTest(
  "every send endpoint answers 400 'Text must not contain NUL …' for a NUL or an unpaired surrogate anywhere in variables",
  async () => {
    const { send, workflow } = await sendSetup();
    const bad = [
      { name: "Ann\u0000e" },
      { name: "\ud83d" },
      { name: "x\udc00y" },
      { nested: { list: [1, "two", { three: "th\u0000ree" }] } },
      { list: [["\u0000"]] },
      { ["na\u0000me"]: "key with NUL" },
      { deep: { ["\ud800"]: "key with a lone surrogate" } },
    ];
    for (const { path, body } of sendBodies(workflow.id)) {
      for (const variables of bad) {
        const res = await send(path, { ...body, variables });
        assert.equal(res.status, 400, `${path} ${JSON.stringify(variables)}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(res.body, UNSTORABLE_ANSWER, path);
      }
    }
    // WhatsApp's list form of variables too.
    const whatsapp = sendBodies(workflow.id).find((s) => s.path === "/whatsapp/send")!;
    assert.deepEqual(
      (await send(whatsapp.path, { ...whatsapp.body, variables: ["ok", "b\u0000d"] })).body,
      UNSTORABLE_ANSWER,
    );
  },
);

dbTest(
  "the send endpoints refuse NUL and unpaired surrogates in metadata and every other free-form field",
  async () => {
    const { send, workflow } = await sendSetup();
    const fields: Record<string, string[][]> = {
      "/messages/send": [["metadata", "note"], ["metadata", "a", "b"], ["subject"], ["from_name"], ["campaign_name"]],
      "/sms/send": [["metadata", "note"], ["direct_first_name"], ["campaign_name"]],
      "/whatsapp/send": [["metadata", "note"], ["direct_last_name"]],
      "/push/send": [["metadata", "note"], ["custom_data", "deep_link"], ["custom_data", "a", "b"], ["image_url"]],
      "/messages/trigger": [["metadata", "note"], ["push_title"]],
      "/events/send": [
        ["event_data", "order", "note"],
        ["user_info", "custom_fields", "plan"],
        ["user_info", "name"],
        ["user_info", "extra"],
        ["source", "user_agent"],
      ],
      "/workflows/trigger": [["metadata", "note"], ["channel_variables", "sms", "plan"]],
      "/workflows/send": [["metadata", "note"], ["steps_override", "1", "variables", "plan"], [
        "channel_variables",
        "email",
        "plan",
      ]],
    };
    for (const { path, body } of sendBodies(workflow.id)) {
      for (const field of fields[path]) {
        for (const text of ["a\u0000b", "a\ud800b"]) {
          const res = await send(path, withValue(body, field, text));
          assert.equal(res.status, 400, `${path} ${field.join(".")}: ${JSON.stringify(res.body)}`);
          assert.deepEqual(res.body, UNSTORABLE_ANSWER, `${path} ${field.join(".")}`);
        }
      }
    }
  },
);

dbTest("a NUL in a send body is refused as the body is validated, before the template is looked up", async () => {
  const { send } = await sendSetup();
  const res = await send("/sms/send", {
    template_key: "no-such-template",
    recipient_type: "direct_sms",
    direct_phone: "+14155550123",
    metadata: { note: "\u0000" },
  });
  assert.deepEqual(res.body, UNSTORABLE_ANSWER);
  // Other problems of the body are answered first, as usual.
  const missing = await send("/sms/send", { template_key: "welcome", variables: { name: "\u0000" } });
  assert.equal(missing.status, 400);
  assert.deepEqual(missing.body.message, ["recipient_type should not be empty"]);
});

dbTest("send fields naming a record are bounded: longer is a 400, and a 404 shows at most the bound", async () => {
  const { send, workflow } = await sendSetup();
  const external = "e".repeat(MAX_ID_LENGTH);
  const contact = (path: string, body: Body) => ({ path, body: { ...body, recipient_type: "contact" } });
  const byContact = [
    contact("/messages/send", { template_key: "welcome" }),
    contact("/sms/send", { template_key: "welcome" }),
    contact("/whatsapp/send", { template_key: "welcome", conversation_category: "UTILITY" }),
    contact("/push/send", { template_key: "welcome" }),
    contact("/messages/trigger", { channels: ["email"], template_key: "welcome" }),
    contact("/workflows/trigger", { workflow_id: workflow.id }),
  ];
  for (const { path, body } of byContact) {
    const over = await send(path, { ...body, contact_external_id: `${external}x` });
    assert.equal(over.status, 400, path);
    assert.deepEqual(over.body.message, [`contact_external_id must be at most ${MAX_ID_LENGTH} characters`], path);
    const at = await send(path, { ...body, contact_external_id: external });
    assert.equal(at.status, 404, path);
    assert.equal(at.body.message, `Contact with external_id '${external}' not found`, path);
  }

  const key = "k".repeat(MAX_KEY_LENGTH);
  const cases: { path: string; body: Body; field: string; status: number; message: string }[] = [
    ...[
      ["/messages/send", { recipient_type: "direct_email", direct_email: "a@example.com" }],
      ["/sms/send", { recipient_type: "direct_sms", direct_phone: "+14155550123" }],
      ["/whatsapp/send", {
        recipient_type: "direct_whatsapp",
        direct_whatsapp: "+14155550123",
        conversation_category: "UTILITY",
      }],
      ["/push/send", { recipient_type: "direct_push", direct_device_token: "a".repeat(64) }],
    ].map(([path, body]) => ({
      path: path as string,
      body: body as Body,
      field: "template_key",
      status: 400,
      message: `Template '${key}' not found for team`,
    })),
    {
      path: "/push/send",
      body: { recipient_type: "direct_push", direct_device_token: "a".repeat(64) },
      field: "template_id",
      status: 400,
      message: `Template '${key}' not found for team`,
    },
    {
      path: "/messages/trigger",
      body: { recipient_type: "all", channels: ["email"] },
      field: "template_key",
      status: 404,
      message: `Template '${key}' not found for channels: email`,
    },
    ...[
      ["/messages/send", { template_key: "welcome" }],
      ["/push/send", { template_key: "welcome" }],
      ["/messages/trigger", { template_key: "welcome", channels: ["email"] }],
    ].map(([path, body]) => ({
      path: path as string,
      body: { ...body as Body, recipient_type: "segment" },
      field: "segment_id",
      status: 404,
      message: `Segment '${key}' not found`,
    })),
    {
      path: "/sms/send",
      body: { template_key: "welcome", recipient_type: "direct_sms", direct_phone: "+14155550123" },
      field: "sms_identity_id",
      status: 404,
      message: `SMS identity '${key}' not found`,
    },
    {
      path: "/whatsapp/send",
      body: {
        template_key: "welcome",
        recipient_type: "direct_whatsapp",
        direct_whatsapp: "+14155550123",
        conversation_category: "UTILITY",
      },
      field: "whatsapp_identity_id",
      status: 404,
      message: `WhatsApp identity '${key}' not found`,
    },
    {
      path: "/push/send",
      body: { template_key: "welcome", recipient_type: "direct_push", direct_device_token: "a".repeat(64) },
      field: "push_identity_id",
      status: 404,
      message: `Push identity '${key}' not found`,
    },
  ];
  for (const { path, body, field, status, message } of cases) {
    const over = await send(path, { ...body, [field]: `${key}x` });
    assert.equal(over.status, 400, `${path} ${field}`);
    assert.deepEqual(over.body.message, [`${field} must be at most ${MAX_KEY_LENGTH} characters`], `${path} ${field}`);
    const at = await send(path, { ...body, [field]: key });
    assert.equal(at.status, status, `${path} ${field}: ${JSON.stringify(at.body)}`);
    assert.equal(at.body.message, message, `${path} ${field}`);
  }

  const longEmail = `${"f".repeat(MAX_EMAIL_LENGTH)}@example.com`;
  for (const path of ["/messages/send", "/messages/trigger"]) {
    const res = await send(path, {
      recipient_type: "all",
      channels: ["email"],
      template_key: "welcome",
      from_email: longEmail,
    });
    assert.deepEqual(res.body.message, [`from_email must be at most ${MAX_EMAIL_LENGTH} characters`], path);
  }
  for (
    const [field, max] of [["workflow_id", MAX_ID_LENGTH], ["workflow_name", 200], [
      "contact_external_id",
      MAX_ID_LENGTH,
    ]] as const
  ) {
    const res = await send("/workflows/trigger", { recipient_type: "contact", [field]: "w".repeat(max + 1) });
    assert.equal(res.status, 400);
    assert.ok(res.body.message.includes(`${field} must be at most ${max} characters`), JSON.stringify(res.body));
  }
  const event = await send("/events/send", {
    event_name: "user_signup",
    user_info: { contact_external_id: `${external}x` },
  });
  assert.deepEqual(event.body.message, [`user_info.contact_external_id must be at most ${MAX_ID_LENGTH} characters`]);
});

dbTest(
  "every schedulable send reads trigger_at, triggerAt and scheduled_at alike: null is now; empty, malformed or past is a 400",
  async () => {
    const { send, workflow } = await sendSetup();
    const past = new Date(Date.now() - 60_000).toISOString();
    for (const { path, status, body } of sendBodies(workflow.id)) {
      // The sends name the field given; the event and workflow starts take the aliases as trigger_at.
      const startsWorkflow = path.startsWith("/events") || path.startsWith("/workflows");
      for (const field of ["trigger_at", "triggerAt", "scheduled_at"]) {
        const now = await send(path, { ...body, [field]: null });
        assert.equal(now.status, status, `${path} ${field}: null: ${JSON.stringify(now.body)}`);
        assert.equal(now.body.scheduled_for, undefined, `${path} ${field}: null is no schedule`);
        const named = startsWorkflow ? "trigger_at" : field;
        for (
          const [value, message, code] of [
            ["", `Invalid ${named} format`, "invalid_format"],
            ["next tuesday", `Invalid ${named} format`, "invalid_format"],
            [past, `${named} must be a future date`, "invalid_value"],
          ]
        ) {
          const res = await send(path, { ...body, [field]: value });
          const what = `${path} ${field}: ${JSON.stringify(value)}: ${JSON.stringify(res.body)}`;
          assert.equal(res.status, 400, what);
          assert.equal(res.body.message, message, what);
          assert.equal(res.body.code, code, what);
          assert.deepEqual(res.body.details, { field: named, code }, what);
        }
      }
    }
  },
);

dbTest(
  "every send endpoint refuses a missing or unknown key, a publishable key and another team's X-Team-ID",
  async () => {
    const { call, keys, team, workflow } = await sendSetup();
    for (const { path, body } of sendBodies(workflow.id)) {
      const refusals: [headers: Record<string, string>, status: number, message: string][] = [
        [{ "X-API-Key": "" }, 401, "Missing API key"],
        [{ "X-API-Key": `${keys.live}x` }, 401, "Invalid API key"],
        [{ "X-API-Key": keys.live, "X-Team-ID": crypto.randomUUID() }, 401, "Invalid team context"],
      ];
      // A publishable key may send events (from a browser or an app), and nothing else.
      if (path !== "/events/send") refusals.push([{ "X-API-Key": keys.publishable }, 403, "Insufficient permissions"]);
      for (const [headers, status, message] of refusals) {
        const res = await call("POST", path, body, { "X-Team-ID": team.id, ...headers });
        const what = `${path} ${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`;
        assert.equal(res.status, status, what);
        assert.equal(res.body.message, message, what);
      }
    }
  },
);
