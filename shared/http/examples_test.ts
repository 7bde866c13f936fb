import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { caller } from "../../harness/fuzz/fixtures.ts";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { EXAMPLE } from "./examples.ts";

type Example = { op: string; method: string; path: string; name: string; value: Record<string, unknown> };

/** Every named request example of the document, in document order. */
function examplesOf(doc: { paths: Record<string, Record<string, Record<string, unknown>>> }): Example[] {
  const out: Example[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const body = op.requestBody as { content: Record<string, { examples?: Record<string, unknown> }> } | undefined;
      const examples = body?.content["application/json"]?.examples ?? {};
      for (const [name, example] of Object.entries(examples)) {
        const value = (example as { value: Record<string, unknown> }).value;
        out.push({ op: `${method.toUpperCase()} ${path}`, method: method.toUpperCase(), path, name, value });
      }
    }
  }
  return out;
}

/** `value` with the values that come from an earlier answer filled in: a session's token and codes. */
function filled(value: unknown, session: { token: string; codes: Record<string, string> }, key?: string): unknown {
  if (value === EXAMPLE.sessionToken) return session.token;
  if (value === EXAMPLE.otpCode) return session.codes[key!];
  if (Array.isArray(value)) return value.map((v) => filled(v, session));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filled(v, session, k)]));
  }
  return value;
}

dbTest("every request example of the OpenAPI document answers 2xx with a test key", async () => {
  // The examples send their OTPs to one address, more often than a recipient's limit allows.
  const deps = await testDeps({ OTP_RECIPIENT_LIMIT: 100 });
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const admin = caller(app, { Authorization: `Bearer ${deps.config.ADMIN_TOKEN}` });
  const call = caller(app, { "X-API-Key": keys.test, "X-Team-ID": team.id });
  // What the examples name (shared/http/examples.ts), as a team would have set it up.
  const key = `/admin/v1/teams/${team.id}/templates`;
  await admin("PUT", `${key}/email/${EXAMPLE.templateKey}`, { subject: "Welcome", html: "<p>Hi {{first_name}}</p>" });
  await admin("PUT", `${key}/sms/${EXAMPLE.templateKey}`, { body: "Welcome {{contact_first_name}}" });
  await admin("PUT", `${key}/whatsapp/${EXAMPLE.templateKey}`, { body: "Welcome {{1}}", category: "UTILITY" });
  await admin("PUT", `${key}/push/${EXAMPLE.templateKey}`, { title: "Welcome", body: "Hi {{first_name}}" });
  const { tag, phone, ...contact } = EXAMPLE.contact;
  await call("POST", "/api/v1/contacts", { ...contact, tags: [tag], custom_fields: { phone } }, [201]);
  await call("PATCH", `/api/v1/contacts/external/${contact.external_id}/device-token`, {
    token: EXAMPLE.deviceToken,
    platform: "android",
  });
  const workflow = await call("POST", "/api/v1/workflows", {
    ...EXAMPLE.workflow,
    steps: [{ step_order: 1, channel_type: "email", step_name: "Welcome", configuration: { template_id: "welcome" } }],
  }, [201]);

  const doc = await (await app.request("/api/v1/openapi.json")).json();
  const examples = examplesOf(doc);
  const otpSend = examples.find((e) => e.op === "POST /api/v1/otp/send")!;
  /** A new OTP session, from the first OTP send example (sandbox mode: its codes come back). */
  const session = async () => {
    const sent = await call("POST", otpSend.path, otpSend.value);
    return { token: sent.session_token as string, codes: sent.sandbox_otps as Record<string, string> };
  };

  const failures: string[] = [];
  for (const example of examples) {
    const needsSession = JSON.stringify(example.value).includes(EXAMPLE.sessionToken);
    const body = needsSession ? filled(example.value, await session()) : example.value;
    // An admin example names its path's channel (the channel accounts' examples).
    const adminPath = example.path.startsWith("/admin/");
    const path = example.path.replace("{id}", workflow.id).replace("{team_id}", team.id)
      .replace("{channel}", example.name);
    const res = await app.request(path, {
      method: example.method,
      headers: {
        "Content-Type": "application/json",
        ...(adminPath
          ? { Authorization: `Bearer ${deps.config.ADMIN_TOKEN}` }
          : { "X-API-Key": keys.test, "X-Team-ID": team.id }),
        "Idempotency-Key": crypto.randomUUID(),
      },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) failures.push(`${example.op} (${example.name}): ${res.status} ${text.slice(0, 300)}`);
  }
  assert.deepEqual(failures, []);
  const ops = new Set(examples.map((e) => e.op));
  for (const op of ["POST /api/v1/sms/send", "POST /api/v1/otp/verify", "POST /api/v1/events/send"]) {
    assert.ok(ops.has(op), `${op} has examples`);
  }
});
