import assert from "node:assert/strict";
import { ulid } from "ulid";
import { startFakeResend } from "../../harness/fakes/fake_servers.ts";
import { createResendProvider } from "./resend.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

function randomApiKey(): string {
  return `re_${crypto.randomUUID().replaceAll("-", "")}`;
}

function randomEmail(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  const n = crypto.randomUUID().slice(0, 8);
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "email",
    to: `user-${n}@example.test`,
    from: "hello@acme.test",
    fromName: "Acme",
    replyTo: "support@acme.test",
    subject: `Welcome ${n}`,
    html: `<p>Hello ${n}</p>`,
    text: `Hello ${n}`,
    ...overrides,
  };
}

Deno.test("resend provider sends html and text with the API key", async () => {
  const apiKey = randomApiKey();
  await using server = startFakeResend({ apiKey });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });
  const message = randomEmail();

  const result = await provider.send(message);

  assert.equal(server.requests.length, 1);
  const [request] = server.requests;
  assert.equal(request.method, "POST");
  assert.equal(request.path, "/emails");
  assert.equal(request.headers.get("authorization"), `Bearer ${apiKey}`);
  assert.equal(request.headers.get("idempotency-key"), message.id);
  assert.deepEqual(JSON.parse(request.body), {
    from: "Acme <hello@acme.test>",
    to: message.to,
    subject: message.subject,
    html: message.html,
    text: message.text,
    reply_to: "support@acme.test",
  });
  assert.match(result.providerMessageId, /^[0-9a-f-]{36}$/);
  assert.equal(provider.name, "resend");
});

Deno.test("resend provider quotes a sender name with reserved characters", async () => {
  const apiKey = randomApiKey();
  await using server = startFakeResend({ apiKey });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  await provider.send(randomEmail({ fromName: 'Acme, Inc. "Support"', html: undefined }));

  const body = JSON.parse(server.requests[0].body);
  assert.equal(body.from, '"Acme, Inc. \\"Support\\"" <hello@acme.test>');
  assert.equal(body.html, undefined);
});

Deno.test("resend provider reports a validation error as permanent with Resend's message", async () => {
  const apiKey = randomApiKey();
  const message = randomEmail();
  await using server = startFakeResend({
    apiKey,
    errors: {
      [message.to]: {
        statusCode: 422,
        name: "validation_error",
        message: "Invalid `to` field. The email address needs to follow the `email@example.com` format.",
      },
    },
  });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "validation_error");
  assert.match(error.message, /Invalid `to` field/);
  assert.equal(server.requests.length, 1);
});

Deno.test("resend provider reports a wrong API key as permanent", async () => {
  await using server = startFakeResend({ apiKey: randomApiKey() });
  const provider = createResendProvider({ apiKey: randomApiKey(), baseUrl: server.url });

  const error = await provider.send(randomEmail()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "invalid_api_key");
});

Deno.test("resend provider reports rate limiting and server errors as temporary", async () => {
  const apiKey = randomApiKey();
  const limited = randomEmail();
  const broken = randomEmail();
  const racing = randomEmail();
  const gateway = randomEmail();
  await using server = startFakeResend({
    apiKey,
    errors: {
      [gateway.to]: { statusCode: 503, name: "service_unavailable", message: "upstream", statusOnlyInHeader: true },
      [racing.to]: {
        statusCode: 409,
        name: "concurrent_idempotent_requests",
        message: "Same idempotency key used while original request is still in progress.",
      },
      [limited.to]: {
        statusCode: 429,
        name: "rate_limit_exceeded",
        message: "Too many requests. You can only make 2 requests per second.",
      },
      [broken.to]: {
        statusCode: 500,
        name: "internal_server_error",
        message: "An unexpected error occurred.",
      },
    },
  });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  for (const message of [limited, broken, racing, gateway]) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, true, error.message);
  }
  assert.equal(server.requests.length, 4);
});

Deno.test("resend provider fails a message for good when the daily or monthly quota is spent", async () => {
  const apiKey = randomApiKey();
  const daily = randomEmail();
  const monthly = randomEmail();
  await using server = startFakeResend({
    apiKey,
    errors: {
      [daily.to]: {
        statusCode: 429,
        name: "daily_quota_exceeded",
        message: "You have reached your daily email sending quota.",
      },
      [monthly.to]: {
        statusCode: 429,
        name: "monthly_quota_exceeded",
        message: "You have reached your monthly email sending quota.",
      },
    },
  });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  for (const [message, code] of [[daily, "daily_quota_exceeded"], [monthly, "monthly_quota_exceeded"]] as const) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, false, error.message);
    assert.equal(error.providerCode, code);
    assert.match(error.message, /quota/);
  }
});

Deno.test("resend provider passes on the Retry-After of a rate limit", async () => {
  const apiKey = randomApiKey();
  const limited = randomEmail();
  await using server = startFakeResend({
    apiKey,
    errors: {
      [limited.to]: {
        statusCode: 429,
        name: "rate_limit_exceeded",
        message: "Too many requests. You can only make 2 requests per second.",
        retryAfter: "7",
      },
    },
  });
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  const error = await provider.send(limited).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, true);
  assert.equal(error.retryAfterMs, 7_000);
});

Deno.test("resend provider reports an unreachable server as temporary", async () => {
  const apiKey = randomApiKey();
  const server = startFakeResend({ apiKey });
  await server.close();
  const provider = createResendProvider({ apiKey, baseUrl: server.url });

  const error = await provider.send(randomEmail()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, true);
});

Deno.test("resend provider refuses a message without a sender", async () => {
  const provider = createResendProvider({ apiKey: randomApiKey(), baseUrl: "http://127.0.0.1:9" });

  await assert.rejects(
    provider.send(randomEmail({ from: undefined })),
    (e) => e instanceof ProviderError && !e.temporary,
  );
});

Deno.test("resend provider gives up on a request Resend does not answer, as a temporary failure", async () => {
  const apiKey = randomApiKey();
  let release = () => {};
  const held = new Promise<void>((resolve) => release = resolve);
  await using server = startFakeResend({ apiKey, hold: () => held });
  const provider = createResendProvider({ apiKey, baseUrl: server.url, timeoutMs: 200 });
  try {
    // Bounded by the test itself, so that a provider with no timeout fails the test instead of hanging it.
    let guard: ReturnType<typeof setTimeout> | undefined;
    const error = await Promise.race([
      provider.send(randomEmail()).catch((e) => e),
      new Promise((resolve) => guard = setTimeout(() => resolve("still waiting after 5 s"), 5_000)),
    ]);
    clearTimeout(guard);
    assert.ok(error instanceof ProviderError, String(error));
    assert.equal(error.message, "Cannot send email: Resend did not answer within 200 ms");
    // Safe to try again: the retry carries the same idempotency key.
    assert.equal(error.temporary, true);
  } finally {
    release();
  }
});
