import assert from "node:assert/strict";
import { ulid } from "ulid";
import { startFakeTwilio } from "../../harness/fakes/fake_servers.ts";
import { createTwilioProvider } from "./twilio.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function randomCredentials() {
  return { accountSid: `AC${randomHex(16)}`, authToken: randomHex(16) };
}

function randomPhone(): string {
  return `+1555${String(crypto.getRandomValues(new Uint32Array(1))[0] % 10_000_000).padStart(7, "0")}`;
}

function randomSms(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "sms",
    to: randomPhone(),
    from: "+15005550006",
    text: `Your code is ${randomHex(3)}`,
    ...overrides,
  };
}

Deno.test("twilio provider sends an sms with basic auth and a form body", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const message = randomSms();

  const result = await provider.send(message);

  assert.equal(server.requests.length, 1);
  const [request] = server.requests;
  assert.equal(request.method, "POST");
  assert.equal(request.path, `/2010-04-01/Accounts/${credentials.accountSid}/Messages.json`);
  assert.equal(
    request.headers.get("authorization"),
    `Basic ${btoa(`${credentials.accountSid}:${credentials.authToken}`)}`,
  );
  assert.equal(request.headers.get("content-type"), "application/x-www-form-urlencoded");
  const form = Object.fromEntries(new URLSearchParams(request.body));
  assert.deepEqual(form, { To: message.to, From: message.from, Body: message.text });
  assert.match(result.providerMessageId, /^SM[0-9a-f]{32}$/);
});

Deno.test("twilio provider prefixes whatsapp addresses", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const message = randomSms({ channel: "whatsapp", from: "+14155238886" });

  await provider.send(message);

  const form = new URLSearchParams(server.requests[0].body);
  assert.equal(form.get("To"), `whatsapp:${message.to}`);
  assert.equal(form.get("From"), "whatsapp:+14155238886");
  assert.equal(form.get("Body"), message.text);
});

Deno.test("twilio provider sends through a messaging service sid", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const service = `MG${randomHex(16)}`;

  await provider.send(randomSms({ from: service }));

  const form = new URLSearchParams(server.requests[0].body);
  assert.equal(form.get("MessagingServiceSid"), service);
  assert.equal(form.get("From"), null);
});

Deno.test("twilio provider reports an invalid number as permanent with Twilio's code", async () => {
  const credentials = randomCredentials();
  const message = randomSms();
  const landline = randomSms();
  await using server = startFakeTwilio({
    ...credentials,
    errors: {
      [message.to]: {
        status: 400,
        code: 21211,
        message: `The 'To' number ${message.to} is not a valid phone number.`,
      },
      [landline.to]: {
        status: 400,
        code: 21614,
        message: `'To' number ${landline.to} is not a valid mobile number`,
      },
    },
  });
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });

  const invalid = await provider.send(message).catch((e) => e);
  const notMobile = await provider.send(landline).catch((e) => e);

  assert.ok(invalid instanceof ProviderError);
  assert.equal(invalid.temporary, false);
  assert.equal(invalid.providerCode, "21211");
  assert.match(invalid.message, /is not a valid phone number/);
  assert.ok(notMobile instanceof ProviderError);
  assert.equal(notMobile.temporary, false);
  assert.equal(notMobile.providerCode, "21614");
});

Deno.test("twilio provider reports wrong credentials as permanent", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({
    accountSid: credentials.accountSid,
    authToken: randomHex(16),
    baseUrl: server.url,
  });

  const error = await provider.send(randomSms()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "20003");
});

Deno.test("twilio provider reports rate limiting and unavailability as temporary", async () => {
  const credentials = randomCredentials();
  const limited = randomSms();
  const down = randomSms();
  await using server = startFakeTwilio({
    ...credentials,
    errors: {
      [limited.to]: { status: 429, code: 20429, message: "Too Many Requests" },
      [down.to]: { status: 503, code: 20503, message: "Service Unavailable" },
    },
  });
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });

  for (const message of [limited, down]) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, true, error.message);
  }
  assert.equal(server.requests.length, 2);
});

Deno.test("twilio provider does not try again what Twilio may have sent: a 500, or no answer in time", async () => {
  const credentials = randomCredentials();
  const broken = randomSms();
  await using server = startFakeTwilio({
    ...credentials,
    errors: { [broken.to]: { status: 500, code: 20500, message: "An internal server error has occurred" } },
  });
  const silent = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Promise((answer) => setTimeout(() => answer(new Response("late")), 1_000)),
  );
  const providers = [
    createTwilioProvider({ ...credentials, baseUrl: server.url }),
    createTwilioProvider({ ...credentials, baseUrl: `http://127.0.0.1:${silent.addr.port}`, timeoutMs: 200 }),
  ];

  for (const [provider, message] of [[providers[0], broken], [providers[1], randomSms()]] as const) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, false, error.message);
    assert.match(error.message, /Twilio may have sent it, so it is not tried again/);
  }
  await silent.shutdown();
});

Deno.test("twilio provider reports an unreachable server as temporary", async () => {
  const credentials = randomCredentials();
  const server = startFakeTwilio(credentials);
  await server.close();
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });

  const error = await provider.send(randomSms()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, true);
  assert.equal(error.maybeAccepted, false);
});

Deno.test("twilio provider does not try again a request whose connection closed before Twilio answered", async () => {
  const credentials = randomCredentials();
  // Reads the request, then hangs up without an answer: the message may have been created.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const hangingUp = (async () => {
    for await (const conn of listener) {
      await conn.read(new Uint8Array(64 * 1024));
      conn.close();
    }
  })();
  const provider = createTwilioProvider({ ...credentials, baseUrl: `http://127.0.0.1:${listener.addr.port}` });

  const error = await provider.send(randomSms()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false, error.message);
  assert.equal(error.maybeAccepted, true);
  assert.match(error.message, /Twilio may have sent it, so it is not tried again/);
  listener.close();
  await hangingUp.catch(() => {});
});

/** A log window around now, as a message handed over just now would look itself up. */
function aroundNow() {
  return { since: Date.now() - 1_000, until: Date.now() + 60_000 };
}

Deno.test("twilio provider finds a message in Twilio's log by recipient, sender and body", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const message = randomSms();
  const { providerMessageId } = await provider.send(message);
  await provider.send({ ...message, id: ulid(), text: `${message.text}!` });
  await provider.send({ ...message, id: ulid(), from: "+15005550001" });
  await provider.send(randomSms({ text: message.text }));

  assert.deepEqual(await provider.find!(message, aroundNow()), [providerMessageId]);

  const list = new URL(server.requests.at(-1)!.path, server.url);
  assert.equal(list.pathname, `/2010-04-01/Accounts/${credentials.accountSid}/Messages.json`);
  assert.equal(list.searchParams.get("To"), message.to);
  assert.equal(list.searchParams.get("From"), message.from);
  assert.match(list.searchParams.get("DateSent>")!, /^\d{4}-\d\d-\d\dT00:00:00Z$/);
});

Deno.test("twilio provider finds a message only within its window, oldest first", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const message = randomSms();
  const first = await provider.send(message);
  const second = await provider.send({ ...message, id: ulid() });

  const found = await provider.find!(message, aroundNow());
  const yesterday = { since: Date.now() - 86_400_000, until: Date.now() - 86_400_000 + 60_000 };

  assert.deepEqual(found, [first.providerMessageId, second.providerMessageId]);
  assert.deepEqual(await provider.find!(message, yesterday), []);
});

Deno.test("twilio provider finds whatsapp messages and messaging-service messages", async () => {
  const credentials = randomCredentials();
  await using server = startFakeTwilio(credentials);
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const whatsapp = randomSms({ channel: "whatsapp", from: "+14155238886" });
  const viaService = randomSms({ from: `MG${randomHex(16)}` });
  const sids = [(await provider.send(whatsapp)).providerMessageId, (await provider.send(viaService)).providerMessageId];
  // The same body and recipient through another messaging service is another sender's message.
  await provider.send({ ...viaService, id: ulid(), from: `MG${randomHex(16)}` });

  assert.deepEqual(await provider.find!(whatsapp, aroundNow()), [sids[0]]);
  assert.deepEqual(await provider.find!(viaService, aroundNow()), [sids[1]]);
  assert.equal(new URL(server.requests.at(-2)!.path, server.url).searchParams.get("To"), `whatsapp:${whatsapp.to}`);
});

Deno.test("twilio provider's find throws when Twilio's log cannot be read", async () => {
  const credentials = randomCredentials();
  const errors: Record<string, { status: number; code: number; message: string }> = {};
  await using server = startFakeTwilio({ ...credentials, errors });
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const message = randomSms();
  await provider.send(message);
  errors[message.to] = { status: 500, code: 20500, message: "An internal server error has occurred" };

  await assert.rejects(provider.find!(message, aroundNow()), /internal server error/);
});
