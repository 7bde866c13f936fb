import assert from "node:assert/strict";
import { parseConfig } from "../config.ts";
import { startFakeResend, startFakeTwilio } from "../../harness/fakes/fake_servers.ts";
import { setLogLevel } from "../log.ts";
import { createProviders, logMessageRoutes, messageRoutes, NO_PROVIDER, outboxForWantOfProvider } from "./registry.ts";

Deno.test("createProviders() sends through configured real providers and keeps sandbox sends in the outbox", async () => {
  const resend = startFakeResend({ apiKey: "re_test_key" });
  const twilio = startFakeTwilio({ accountSid: "AC123", authToken: "secret" });
  try {
    const config = parseConfig({
      RESEND_API_KEY: "re_test_key",
      RESEND_BASE_URL: resend.url,
      TWILIO_ACCOUNT_SID: "AC123",
      TWILIO_AUTH_TOKEN: "secret",
      TWILIO_BASE_URL: twilio.url,
    });
    // The outbox is never reached in this test, so no database is needed.
    const providers = createProviders(config, undefined as never);
    assert.notEqual(providers.get("email", { sandbox: false }).name, "outbox");
    assert.notEqual(providers.get("sms", { sandbox: false }).name, "outbox");
    assert.equal(providers.get("push", { sandbox: false }).name, "outbox");
    assert.equal(providers.get("email", { sandbox: true }).name, "outbox");
    await providers.get("email", { sandbox: false }).send({
      id: "01J0000000000000000000000A",
      teamId: "t",
      channel: "email",
      to: "a@example.com",
      from: "no-reply@example.com",
      subject: "Hi",
      html: "<p>Hi</p>",
    });
    assert.equal(resend.requests.length, 1);
  } finally {
    await resend.close();
    await twilio.close();
  }
});

Deno.test("createProviders() asks Twilio for status callbacks on PUBLIC_URL with the team id", async () => {
  await using twilio = startFakeTwilio({ accountSid: "AC123", authToken: "secret" });
  const twilioConfig = {
    TWILIO_ACCOUNT_SID: "AC123",
    TWILIO_AUTH_TOKEN: "secret",
    TWILIO_BASE_URL: twilio.url,
  };
  const teamId = crypto.randomUUID();
  const sms = {
    id: "01J0000000000000000000000B",
    teamId,
    channel: "sms" as const,
    to: "+14155550123",
    from: "+15005550006",
    text: "Hi",
  };
  const withUrl = createProviders(
    parseConfig({ ...twilioConfig, PUBLIC_URL: "https://msg.example.com/" }),
    undefined as never,
  );
  await withUrl.get("sms", { sandbox: false }).send(sms);
  await withUrl.get("whatsapp", { sandbox: false }).send({ ...sms, channel: "whatsapp" });
  const without = createProviders(parseConfig(twilioConfig), undefined as never);
  await without.get("sms", { sandbox: false }).send(sms);

  const callbacks = twilio.requests.map((r) => new URLSearchParams(r.body).get("StatusCallback"));
  const expected = `https://msg.example.com/api/v1/inbound/twilio/status?team_id=${teamId}`;
  assert.deepEqual(callbacks, [expected, expected, null]);
});

Deno.test("messageRoutes() says where each channel's live messages go: its provider, or the outbox", () => {
  const apns = { APNS_TEAM_ID: "T", APNS_KEY_ID: "K", APNS_PRIVATE_KEY: "P", APNS_BUNDLE_ID: "B" };
  assert.deepEqual(messageRoutes(parseConfig({})), {
    email: NO_PROVIDER,
    sms: NO_PROVIDER,
    whatsapp: NO_PROVIDER,
    push: NO_PROVIDER,
  });
  assert.deepEqual(
    messageRoutes(parseConfig({ RESEND_API_KEY: "re_x", TWILIO_ACCOUNT_SID: "AC1", TWILIO_AUTH_TOKEN: "t", ...apns })),
    { email: "resend", sms: "twilio", whatsapp: "twilio", push: "fcm: not configured; apns: ios" },
  );
});

Deno.test("outboxForWantOfProvider() holds for live messages of a channel without a provider, unless billed", () => {
  const config = parseConfig({ RESEND_API_KEY: "re_x" });
  const providers = createProviders(config, undefined as never);
  assert.equal(outboxForWantOfProvider({ config, providers }, "sms", false), true);
  assert.equal(outboxForWantOfProvider({ config, providers }, "email", false), false);
  // Test keys always use the outbox: that is no want of a provider.
  assert.equal(outboxForWantOfProvider({ config, providers }, "sms", true), false);
  assert.equal(outboxForWantOfProvider({ config: { ...config, BILL_OUTBOX: true }, providers }, "sms", false), false);
});

Deno.test("logMessageRoutes() writes one JSON line, a warning while some channel has no provider", () => {
  const lines: string[] = [];
  const [out, err] = [console.log, console.error];
  console.log = (line: string) => lines.push(`info ${line}`);
  console.error = (line: string) => lines.push(`warn ${line}`);
  setLogLevel("info");
  try {
    logMessageRoutes(parseConfig({ RESEND_API_KEY: "re_x" }));
  } finally {
    [console.log, console.error] = [out, err];
  }
  assert.equal(lines.length, 1);
  assert.ok(lines[0].startsWith("warn "));
  const line = JSON.parse(lines[0].slice(5));
  assert.equal(line.msg, "message routes");
  assert.deepEqual(line.live, { email: "resend", sms: NO_PROVIDER, whatsapp: NO_PROVIDER, push: NO_PROVIDER });
  assert.equal(line.outbox_billed, false);
});
