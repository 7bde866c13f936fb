/**
 * A harmless call per provider, so that an owner can tell whether a channel account's credentials
 * work before a message depends on them (the dashboard's "Check"). Nothing is sent, nothing is
 * created: each call only reads the account (Twilio's account, Vonage's balance, Resend's domains,
 * SES's account, an SMTP server's greeting and AUTH, FCM's OAuth token). APNs has no such call.
 * A result never carries the credentials, only what the provider said of them.
 */
import { GetAccountCommand, SESv2Client } from "@aws-sdk/client-sesv2";
import { importPKCS8 } from "jose";
import nodemailer from "nodemailer";
import { Resend } from "resend";
import type { ChannelAccount } from "../channel_accounts.ts";
import type { CredentialsOf } from "./credentials.ts";
import { createAccessTokenSource, DEFAULT_TOKEN_URL } from "./fcm.ts";

/** What a check found: `ok` when the provider accepted the credentials; `checkable` false when it cannot be asked. */
export interface CheckResult {
  ok: boolean;
  checkable: boolean;
  /** One sentence for the owner: what the provider answered. */
  message: string;
}

/** How long a check may wait for the provider. */
const TIMEOUT_MS = 10_000;

const TWILIO_BASE_URL = "https://api.twilio.com";
const VONAGE_BASE_URL = "https://rest.nexmo.com";
const RESEND_BASE_URL = "https://api.resend.com";

const passed = (message: string): CheckResult => ({ ok: true, checkable: true, message });
const failed = (message: string): CheckResult => ({ ok: false, checkable: true, message });

/** Asks the account's provider something harmless with its credentials; never throws. */
export async function checkAccount(
  account: Pick<ChannelAccount, "provider" | "credentials" | "baseUrl">,
  options: { timeoutMs?: number } = {},
): Promise<CheckResult> {
  const timeoutMs = options.timeoutMs ?? TIMEOUT_MS;
  try {
    return await check(account, timeoutMs);
  } catch (error) {
    const e = error as Error;
    const reason = e?.name === "TimeoutError" || e?.name === "AbortError"
      ? `no answer within ${timeoutMs / 1000} s`
      : e?.message ?? String(error);
    return failed(`Could not reach ${account.provider}: ${reason}`);
  }
}

function check(account: Pick<ChannelAccount, "provider" | "credentials" | "baseUrl">, timeoutMs: number) {
  const base = account.baseUrl?.replace(/\/+$/, "");
  switch (account.provider) {
    case "twilio":
      return checkTwilio(account.credentials as CredentialsOf<"twilio">, base ?? TWILIO_BASE_URL, timeoutMs);
    case "vonage":
      return checkVonage(account.credentials as CredentialsOf<"vonage">, base ?? VONAGE_BASE_URL, timeoutMs);
    case "resend":
      return checkResend(account.credentials as CredentialsOf<"resend">, base ?? RESEND_BASE_URL, timeoutMs);
    case "ses":
      return checkSes(account.credentials as CredentialsOf<"ses">, base, timeoutMs);
    case "smtp":
      return checkSmtp(account.credentials as CredentialsOf<"smtp">, timeoutMs);
    case "fcm":
      return checkFcm(account.credentials as CredentialsOf<"fcm">, timeoutMs);
    case "apns":
      return checkApns(account.credentials as CredentialsOf<"apns">);
  }
}

/** Twilio: fetches the account itself (GET /2010-04-01/Accounts/{sid}.json). */
async function checkTwilio(c: CredentialsOf<"twilio">, base: string, timeoutMs: number): Promise<CheckResult> {
  const response = await fetch(`${base}/2010-04-01/Accounts/${encodeURIComponent(c.account_sid)}.json`, {
    headers: { authorization: `Basic ${btoa(`${c.account_sid}:${c.auth_token}`)}` },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const body = await response.json().catch(() => ({})) as { status?: string; message?: string; code?: number };
  if (!response.ok) {
    return failed(`Twilio refused the credentials: ${response.status} ${body.message ?? ""}`.trimEnd());
  }
  if (body.status && body.status !== "active") return failed(`Twilio says the account is ${body.status}.`);
  return passed("Twilio accepted the credentials: the account is active.");
}

/** Vonage: reads the account balance (GET /account/get-balance). */
async function checkVonage(c: CredentialsOf<"vonage">, base: string, timeoutMs: number): Promise<CheckResult> {
  const query = new URLSearchParams({ api_key: c.api_key, api_secret: c.api_secret });
  const response = await fetch(`${base}/account/get-balance?${query}`, { signal: AbortSignal.timeout(timeoutMs) });
  const body = await response.json().catch(() => ({})) as { value?: number; "error-code-label"?: string };
  if (!response.ok || typeof body.value !== "number") {
    return failed(`Vonage refused the credentials: ${response.status} ${body["error-code-label"] ?? ""}`.trimEnd());
  }
  return passed(`Vonage accepted the credentials: the balance is ${body.value.toFixed(2)} EUR.`);
}

/** Resend: lists the domains. */
async function checkResend(c: CredentialsOf<"resend">, base: string, timeoutMs: number): Promise<CheckResult> {
  const resend = new Resend(c.api_key, { baseUrl: base });
  const { data, error } = await withTimeout(resend.domains.list(), timeoutMs);
  if (error) return failed(`Resend refused the key: ${error.message}`);
  const count = data?.data.length ?? 0;
  return passed(`Resend accepted the key: ${count} domain${count === 1 ? "" : "s"} on the account.`);
}

/** SES: reads the account (GetAccount), which says whether sending is enabled. */
async function checkSes(c: CredentialsOf<"ses">, base: string | undefined, timeoutMs: number): Promise<CheckResult> {
  const client = new SESv2Client({
    region: c.region,
    credentials: { accessKeyId: c.access_key_id, secretAccessKey: c.secret_access_key },
    endpoint: base,
    maxAttempts: 1,
    requestHandler: { connectionTimeout: timeoutMs, requestTimeout: timeoutMs },
  });
  try {
    const account = await client.send(new GetAccountCommand({}), { abortSignal: AbortSignal.timeout(timeoutMs) });
    if (account.SendingEnabled === false) return failed("SES accepted the credentials, but sending is paused.");
    const sandbox = account.ProductionAccessEnabled ? "" : " (still in the SES sandbox: verified recipients only)";
    return passed(`SES accepted the credentials${sandbox}.`);
  } catch (error) {
    const e = error as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    if (typeof e.$metadata?.httpStatusCode === "number") return failed(`SES refused: ${e.name}: ${e.message}`);
    throw error;
  } finally {
    client.destroy();
  }
}

/** SMTP: connects, greets and signs in (nodemailer's verify()), then quits without a message. */
async function checkSmtp(c: CredentialsOf<"smtp">, timeoutMs: number): Promise<CheckResult> {
  const port = c.port ?? 587;
  const transport = nodemailer.createTransport({
    host: c.host,
    port,
    secure: c.secure ?? port === 465,
    auth: c.username !== undefined ? { user: c.username, pass: c.password ?? "" } : undefined,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    logger: false,
    debug: false,
  });
  try {
    await transport.verify();
    return passed(`The SMTP server at ${c.host}:${port} accepted the connection${c.username ? " and sign-in" : ""}.`);
  } catch (error) {
    const e = error as { responseCode?: number; response?: string; message?: string };
    if (typeof e.responseCode === "number") return failed(`The SMTP server answered: ${e.response ?? e.message}`);
    throw error;
  } finally {
    transport.close();
  }
}

/** FCM: exchanges the service account's signed JWT for an OAuth access token (sends nothing). */
async function checkFcm(c: CredentialsOf<"fcm">, timeoutMs: number): Promise<CheckResult> {
  const tokens = createAccessTokenSource(c, c.token_uri ?? DEFAULT_TOKEN_URL, timeoutMs);
  try {
    await tokens.get();
  } catch (error) {
    return failed((error as Error).message);
  }
  return passed("Google issued an access token for the service account.");
}

/** APNs has no call that sends nothing: only whether the key can sign a provider token is known. */
async function checkApns(c: CredentialsOf<"apns">): Promise<CheckResult> {
  try {
    await importPKCS8(c.private_key.replaceAll("\\n", "\n"), "ES256");
  } catch (error) {
    return failed(`The key cannot sign APNs tokens: ${(error as Error).message}`);
  }
  return {
    ok: true,
    checkable: false,
    message: "Not checkable: APNs has no call that sends nothing. The key is a valid ES256 key.",
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new DOMException("timed out", "TimeoutError")), ms);
    promise.then(resolve, reject).finally(() => clearTimeout(timer));
  });
}
