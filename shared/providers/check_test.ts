import assert from "node:assert/strict";
import { checkAccount } from "./check.ts";
import {
  generateP256KeyPair,
  generateRsaKeyPair,
  startFakeFcm,
  startFakeResend,
  startFakeTwilio,
} from "../../harness/fakes/fake_servers.ts";
import { startFakeSes } from "../../harness/fakes/fake_ses.ts";
import { startFakeSmtp } from "../../harness/fakes/fake_smtp.ts";
import { startFakeVonage } from "../../harness/fakes/fake_vonage.ts";

const hex = (n: number) => crypto.randomUUID().replaceAll("-", "").repeat(2).slice(0, n);

/** A request of a check that is not a read: a check must never send or create anything. */
function writes(requests: { method: string }[]): string[] {
  return requests.map((r) => r.method).filter((m) => m !== "GET");
}

Deno.test("check: Twilio fetches the account, and says when the token is wrong", async () => {
  const credentials = { account_sid: `AC${hex(32)}`, auth_token: hex(32) };
  await using server = startFakeTwilio({ accountSid: credentials.account_sid, authToken: credentials.auth_token });
  const good = await checkAccount({ provider: "twilio", credentials, baseUrl: server.url });
  assert.deepEqual([good.ok, good.checkable], [true, true], good.message);
  const bad = await checkAccount({
    provider: "twilio",
    credentials: { ...credentials, auth_token: "x" },
    baseUrl: server.url,
  });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /401/);
  assert.deepEqual(writes(server.requests), []);
  assert.equal(server.messages.length, 0);
});

Deno.test("check: Vonage reads the balance, and says when the secret is wrong", async () => {
  const credentials = { api_key: hex(8), api_secret: hex(16) };
  await using server = startFakeVonage({ apiKey: credentials.api_key, apiSecret: credentials.api_secret });
  const good = await checkAccount({ provider: "vonage", credentials, baseUrl: server.url });
  assert.equal(good.ok, true, good.message);
  assert.match(good.message, /balance is 10\.50/);
  const bad = await checkAccount({
    provider: "vonage",
    credentials: { ...credentials, api_secret: "nope" },
    baseUrl: server.url,
  });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /authentication failed/);
  assert.deepEqual(writes(server.requests), []);
});

Deno.test("check: Resend lists the domains, and says when the key is wrong", async () => {
  const apiKey = `re_${hex(24)}`;
  await using server = startFakeResend({ apiKey });
  const good = await checkAccount({ provider: "resend", credentials: { api_key: apiKey }, baseUrl: server.url });
  assert.equal(good.ok, true, good.message);
  assert.match(good.message, /0 domains/);
  const bad = await checkAccount({
    provider: "resend",
    credentials: { api_key: `re_${hex(24)}` },
    baseUrl: server.url,
  });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /API key is invalid/);
  assert.deepEqual(writes(server.requests), []);
});

Deno.test("check: SES reads the account with a signed request, and says when the secret is wrong", async () => {
  const credentials = {
    region: "eu-west-1",
    access_key_id: `AKIA${hex(16).toUpperCase()}`,
    secret_access_key: hex(40),
  };
  await using server = startFakeSes({
    region: credentials.region,
    accessKeyId: credentials.access_key_id,
    secretAccessKey: credentials.secret_access_key,
  });
  const good = await checkAccount({ provider: "ses", credentials, baseUrl: server.url });
  assert.equal(good.ok, true, good.message);
  assert.match(good.message, /sandbox/);
  const bad = await checkAccount({
    provider: "ses",
    credentials: { ...credentials, secret_access_key: "wrong" },
    baseUrl: server.url,
  });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /SignatureDoesNotMatch/);
  assert.deepEqual(writes(server.requests), []);
  assert.equal(server.emails.length, 0);
});

Deno.test("check: SMTP greets and signs in without a message, and says when the password is wrong", async () => {
  await using server = startFakeSmtp({ username: "mailer", password: "s3cret-pass" });
  const credentials = { host: server.host, port: server.port, username: "mailer", password: "s3cret-pass" };
  const good = await checkAccount({ provider: "smtp", credentials });
  assert.equal(good.ok, true, good.message);
  const bad = await checkAccount({ provider: "smtp", credentials: { ...credentials, password: "wrong" } });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /^The SMTP server answered: 535/);
  assert.equal(server.commands.filter((c) => /^(MAIL|RCPT|DATA)/i.test(c)).length, 0);
  assert.equal(server.messages.length, 0);
});

Deno.test("check: an SMTP server that is not there is a failed check, not an error", async () => {
  const closed = startFakeSmtp();
  await closed.close();
  const result = await checkAccount({ provider: "smtp", credentials: { host: closed.host, port: closed.port } });
  assert.equal(result.ok, false);
  assert.match(result.message, /^Could not reach smtp/);
});

Deno.test("check: FCM gets an access token and sends nothing; a key of another account is refused", async () => {
  const keys = await generateRsaKeyPair();
  const credentials = {
    project_id: `p-${hex(8)}`,
    client_email: `push@p-${hex(8)}.example`,
    private_key: keys.privateKeyPem,
  };
  await using server = startFakeFcm({
    projectId: credentials.project_id,
    clientEmail: credentials.client_email,
    publicKey: keys.publicKey,
  });
  const good = await checkAccount({ provider: "fcm", credentials: { ...credentials, token_uri: server.tokenUrl } });
  assert.equal(good.ok, true, good.message);
  assert.equal(server.issuedTokens.length, 1);
  const other = await generateRsaKeyPair();
  const bad = await checkAccount({
    provider: "fcm",
    credentials: { ...credentials, private_key: other.privateKeyPem, token_uri: server.tokenUrl },
  });
  assert.equal(bad.ok, false);
  assert.match(bad.message, /Invalid JWT Signature/);
  assert.equal(server.requests.filter((r) => r.path.includes("messages:send")).length, 0);
});

Deno.test("check: APNs is not checkable, but a key that cannot sign is said so", async () => {
  const keys = await generateP256KeyPair();
  const credentials = { team_id: "TEAM123456", key_id: "KEY1234567", bundle_id: "com.example.app" };
  const good = await checkAccount({
    provider: "apns",
    credentials: { ...credentials, private_key: keys.privateKeyPem },
  });
  assert.deepEqual([good.ok, good.checkable], [true, false]);
  assert.match(good.message, /^Not checkable/);
  const rsa = await generateRsaKeyPair();
  const bad = await checkAccount({ provider: "apns", credentials: { ...credentials, private_key: rsa.privateKeyPem } });
  assert.equal(bad.ok, false);
});
