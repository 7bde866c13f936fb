/**
 * Fake Resend, Twilio, FCM and APNs servers for tests (Vonage, SES and SMTP beside them, fake_*.ts): each checks what the real provider checks,
 * records what it received, and answers the provider's own error bodies on demand.
 */
import { exportPKCS8, jwtVerify } from "jose";

/** One request a fake server received. */
export interface RecordedRequest {
  method: string;
  /** Path and query string. */
  path: string;
  headers: Headers;
  body: string;
}

/** A fake provider listening on a loopback port. */
export interface FakeServer {
  /** Base URL to give the provider client, e.g. `http://127.0.0.1:41234`. */
  url: string;
  /** Every request received, in order, including refused ones. */
  requests: RecordedRequest[];
  close(): Promise<void>;
  /** So a test can write `await using server = startFake…()`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** What a fake answers a request with (the body already read). */
export type Handler = (request: Request, body: string) => Response | Promise<Response>;

/** Serves `handler` on a loopback port, recording every request (fake_vonage.ts and fake_ses.ts use it too). */
export function serveFake(handler: Handler): FakeServer {
  const requests: RecordedRequest[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (request) => {
      const body = await request.text();
      const url = new URL(request.url);
      requests.push({
        method: request.method,
        path: url.pathname + url.search,
        headers: request.headers,
        body,
      });
      return await handler(request, body);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

/** A JSON answer. */
export function json(status: number, body: unknown, headers: HeadersInit = {}): Response {
  return Response.json(body, { status, headers });
}

/** `bytes` random bytes in hex. */
export function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

// --- Resend -------------------------------------------------------------------------------------

/** A Resend error body, as the Resend API answers it. */
export interface ResendErrorBody {
  statusCode: number;
  name: string;
  message: string;
  /** Sent as the Retry-After header (not in the body), as Resend does on a 429. */
  retryAfter?: string;
  /** Leave `statusCode` out of the body: a proxy's or gateway's answer in front of the API. */
  statusOnlyInHeader?: boolean;
}

/**
 * Starts a fake Resend API that accepts `POST /emails` with `Bearer <apiKey>`; an email it accepts
 * is answered once `hold()` resolves (a test's stand-in for an API that does not answer).
 */
export function startFakeResend(
  options: {
    apiKey: string;
    errors?: Record<string, ResendErrorBody>;
    hold?: () => Promise<void> | undefined;
    /** Domains whose DNS records are "published": they pass verification (see resendDomains). */
    published?: Set<string>;
  },
): FakeServer {
  const domains = resendDomains(options.published ?? new Set());
  return serveFake(async (request, body) => {
    const auth = request.headers.get("authorization");
    if (!auth) {
      return json(401, { statusCode: 401, name: "missing_api_key", message: "Missing API key" });
    }
    if (auth !== `Bearer ${options.apiKey}`) {
      return json(403, { statusCode: 403, name: "invalid_api_key", message: "API key is invalid" });
    }
    const path = new URL(request.url).pathname;
    if (path === "/domains" || path.startsWith("/domains/")) return domains(request.method, path, body);
    if (request.method !== "POST" || path !== "/emails") {
      return json(404, { statusCode: 404, name: "not_found", message: "Route not found" });
    }
    const email = JSON.parse(body) as { from?: string; to?: string | string[]; subject?: string };
    for (const field of ["from", "to", "subject"] as const) {
      if (!email[field]) {
        return json(422, {
          statusCode: 422,
          name: "missing_required_field",
          message: `Missing \`${field}\` field.`,
        });
      }
    }
    const recipients = Array.isArray(email.to) ? email.to : [email.to!];
    const error = recipients.map((to) => options.errors?.[to]).find(Boolean);
    if (error) {
      const { retryAfter, statusOnlyInHeader, statusCode, ...rest } = error;
      const body = statusOnlyInHeader ? rest : { statusCode, ...rest };
      return json(statusCode, body, retryAfter ? { "retry-after": retryAfter } : {});
    }
    await options.hold?.();
    return json(200, { id: crypto.randomUUID() });
  });
}

/** A domain the fake Resend holds, as its domains API shows it. */
interface FakeResendDomain {
  id: string;
  name: string;
  status: string;
  created_at: string;
  region: string;
  records: {
    record: string;
    name: string;
    type: string;
    ttl: string;
    status: string;
    value: string;
    priority?: number;
  }[];
}

/**
 * Resend's domains API (`POST /domains`, `GET /domains` (the list), `GET /domains/{id}`, `POST /domains/{id}/verify`, `DELETE
 * /domains/{id}`): a new domain is `not_started` with the SPF and DKIM records Resend asks for; a
 * verify makes it `pending`, and the next read finds it `verified` when its name is in `published`
 * (its records are in DNS), else still `pending`, as Resend's checks take their time.
 */
function resendDomains(published: Set<string>) {
  const domains = new Map<string, FakeResendDomain>();
  const notFound = () => json(404, { statusCode: 404, name: "not_found", message: "Domain not found" });
  const setStatus = (d: FakeResendDomain, status: string) => {
    d.status = status;
    for (const r of d.records) r.status = status;
  };
  return (method: string, path: string, body: string): Response => {
    const [, , id, action] = path.split("/");
    if (method === "POST" && !id) {
      const { name } = JSON.parse(body || "{}") as { name?: string };
      if (!name) {
        return json(422, { statusCode: 422, name: "missing_required_field", message: "Missing `name` field." });
      }
      if ([...domains.values()].some((d) => d.name === name)) {
        return json(403, {
          statusCode: 403,
          name: "validation_error",
          message: `The domain ${name} has been registered already.`,
        });
      }
      const domain: FakeResendDomain = {
        id: crypto.randomUUID(),
        name,
        status: "not_started",
        created_at: new Date().toISOString(),
        region: "us-east-1",
        records: [
          {
            record: "SPF",
            name: "send",
            type: "MX",
            ttl: "Auto",
            status: "not_started",
            value: "feedback-smtp.us-east-1.amazonses.com",
            priority: 10,
          },
          {
            record: "SPF",
            name: "send",
            type: "TXT",
            ttl: "Auto",
            status: "not_started",
            value: '"v=spf1 include:amazonses.com ~all"',
          },
          {
            record: "DKIM",
            name: "resend._domainkey",
            type: "TXT",
            ttl: "Auto",
            status: "not_started",
            value: `p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ${randomHex(16)}`,
          },
        ],
      };
      domains.set(domain.id, domain);
      return json(200, { ...domain, capabilities: { sending: "enabled", receiving: "disabled" } });
    }
    if (method === "GET" && !id) {
      const data = [...domains.values()].map(({ records: _, ...d }) => d);
      return json(200, { object: "list", has_more: false, data });
    }
    const domain = id ? domains.get(id) : undefined;
    if (!domain) return notFound();
    if (method === "GET" && !action) {
      if (domain.status === "pending" && published.has(domain.name)) setStatus(domain, "verified");
      return json(200, { object: "domain", ...domain, capabilities: { sending: "enabled", receiving: "disabled" } });
    }
    if (method === "POST" && action === "verify") {
      if (domain.status !== "verified") setStatus(domain, "pending");
      return json(200, { object: "domain", id: domain.id });
    }
    if (method === "DELETE" && !action) {
      domains.delete(domain.id);
      return json(200, { object: "domain", id: domain.id, deleted: true });
    }
    return json(404, { statusCode: 404, name: "not_found", message: "Route not found" });
  };
}

// --- Twilio -------------------------------------------------------------------------------------

/** A Twilio REST error, as the Twilio API answers it. */
export interface TwilioErrorBody {
  status: number;
  code: number;
  message: string;
}

/** A message the fake Twilio created, as its Messages API shows it (snake_case, RFC 2822 dates). */
export interface FakeTwilioMessage {
  sid: string;
  account_sid: string;
  to: string;
  from: string | null;
  messaging_service_sid: string | null;
  body: string | null;
  status: string;
  num_segments: string;
  direction: string;
  api_version: string;
  date_created: string;
  date_updated: string;
  date_sent: string | null;
  uri: string;
}

/** A fake Twilio, and the messages it created (accepted), oldest first. */
export interface FakeTwilio extends FakeServer {
  messages: FakeTwilioMessage[];
}

/**
 * Starts a fake Twilio API: `GET /2010-04-01/Accounts/{sid}.json` shows the account, `POST
 * /2010-04-01/Accounts/{sid}/Messages.json` creates a message, and
 * `GET` on the same path lists the messages created, newest first, filtered by `To`, `From`,
 * `DateSent>` and `DateSent<` and paged by `PageSize`/`Page`, in Twilio's page shape. `errors` (by
 * `To`) is read at each request, a create's or a list's; a message it accepts is created and
 * answered once `hold(to)` resolves (a test's stand-in for a process that dies before it reads the
 * answer: Twilio has the message all the same). `failCreate(to)`, asked after the hold, refuses a
 * create with the error it answers while the list still reads: an account that turns some messages
 * away as slowly as it takes the others, so that its failures and successes keep their order.
 */
export function startFakeTwilio(
  options: {
    accountSid: string;
    authToken: string;
    errors?: Record<string, TwilioErrorBody>;
    hold?: (to: string) => Promise<void> | undefined;
    failCreate?: (to: string) => TwilioErrorBody | undefined;
  },
): FakeTwilio {
  const twilioError = (e: TwilioErrorBody) =>
    json(e.status, { ...e, more_info: `https://www.twilio.com/docs/errors/${e.code}` });
  const messagesPath = `/2010-04-01/Accounts/${options.accountSid}/Messages.json`;
  const accountPath = `/2010-04-01/Accounts/${options.accountSid}.json`;
  const messages: FakeTwilioMessage[] = [];
  const fake = serveFake(async (request, body) => {
    const expected = `Basic ${btoa(`${options.accountSid}:${options.authToken}`)}`;
    if (request.headers.get("authorization") !== expected) {
      return twilioError({ status: 401, code: 20003, message: "Authenticate" });
    }
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === accountPath) {
      return json(200, {
        sid: options.accountSid,
        friendly_name: "Fake Twilio account",
        status: "active",
        type: "Full",
        uri: accountPath,
      });
    }
    if (url.pathname !== messagesPath || (request.method !== "POST" && request.method !== "GET")) {
      return twilioError({ status: 404, code: 20404, message: "The requested resource was not found" });
    }
    if (request.method === "GET") {
      const error = options.errors?.[url.searchParams.get("To") ?? ""];
      return error ? twilioError(error) : json(200, messagePage(messages, messagesPath, url.searchParams));
    }
    if (request.headers.get("content-type") !== "application/x-www-form-urlencoded") {
      return twilioError({ status: 400, code: 20001, message: "Unsupported content type" });
    }
    const form = new URLSearchParams(body);
    const to = form.get("To");
    const from = form.get("From") ?? form.get("MessagingServiceSid");
    if (!to) return twilioError({ status: 400, code: 21604, message: "A 'To' phone number is required." });
    if (!from) {
      return twilioError({ status: 400, code: 21603, message: "A 'From' phone number is required." });
    }
    const error = options.errors?.[to];
    if (error) return twilioError(error);
    await options.hold?.(to);
    const refusal = options.failCreate?.(to);
    if (refusal) return twilioError(refusal);
    const now = new Date().toUTCString();
    const sid = `SM${randomHex(16)}`;
    const created: FakeTwilioMessage = {
      sid,
      account_sid: options.accountSid,
      to,
      from: form.get("From"),
      messaging_service_sid: form.get("MessagingServiceSid"),
      body: form.get("Body"),
      status: "queued",
      num_segments: "1",
      direction: "outbound-api",
      api_version: "2010-04-01",
      date_created: now,
      date_updated: now,
      date_sent: null,
      uri: messagesPath.replace(/\.json$/, `/${sid}.json`),
    };
    // The fake hands every message on at once: listed, it shows as sent.
    messages.push({ ...created, status: "sent", date_sent: now });
    return json(201, created);
  });
  return { ...fake, messages };
}

/**
 * One page of the Messages list as Twilio answers it: newest first, the records under `messages`,
 * and the paging fields (`next_page_uri` null on the last page) the SDK follows.
 */
function messagePage(all: FakeTwilioMessage[], path: string, query: URLSearchParams) {
  const after = query.has("DateSent>") ? Date.parse(query.get("DateSent>")!) : -Infinity;
  const before = query.has("DateSent<") ? Date.parse(query.get("DateSent<")!) : Infinity;
  const matching = all.filter((m) => {
    const sent = m.date_sent === null ? NaN : Date.parse(m.date_sent);
    return (!query.has("To") || m.to === query.get("To")) &&
      (!query.has("From") || m.from === query.get("From")) &&
      (!query.has("DateSent>") && !query.has("DateSent<") || sent >= after && sent <= before);
  }).reverse();
  const size = Math.min(Number(query.get("PageSize") ?? 50), 1000);
  const page = Number(query.get("Page") ?? 0);
  const uriOf = (n: number) => {
    const q = new URLSearchParams(query);
    q.set("PageSize", String(size));
    q.set("Page", String(n));
    return `${path}?${q}`;
  };
  const records = matching.slice(page * size, (page + 1) * size);
  return {
    messages: records,
    end: page * size + Math.max(records.length - 1, 0),
    first_page_uri: uriOf(0),
    next_page_uri: (page + 1) * size < matching.length ? uriOf(page + 1) : null,
    previous_page_uri: page > 0 ? uriOf(page - 1) : null,
    page,
    page_size: size,
    start: page * size,
    uri: uriOf(page),
  };
}

// --- FCM ----------------------------------------------------------------------------------------

/** An FCM HTTP v1 error to answer for a device token. */
export interface FcmErrorSpec {
  status: number;
  /** The FcmError code, e.g. UNREGISTERED, INVALID_ARGUMENT, QUOTA_EXCEEDED, UNAVAILABLE. */
  errorCode: string;
  message: string;
  /** Adds the BadRequest field violation on `message.token` that FCM sends for malformed tokens. */
  tokenViolation?: boolean;
  /** Sent as the Retry-After header. */
  retryAfter?: string;
}

const GOOGLE_STATUS: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

/** A fake FCM server and the Google OAuth2 token endpoint in front of it. */
export interface FakeFcmServer extends FakeServer {
  /** The token endpoint (`{url}/token`) to put in the service account's `token_uri`. */
  tokenUrl: string;
  /** Access tokens issued so far. */
  issuedTokens: string[];
}

/**
 * Starts a fake FCM v1 API with its OAuth2 token endpoint: the token endpoint verifies the
 * service-account JWT with `publicKey`; `messages:send` accepts only the access tokens it issued.
 */
export function startFakeFcm(
  options: {
    projectId: string;
    clientEmail: string;
    publicKey: CryptoKey;
    errors?: Record<string, FcmErrorSpec>;
  },
): FakeFcmServer {
  const issuedTokens: string[] = [];
  const googleError = (status: number, message: string, details: unknown[] = []) =>
    json(status, { error: { code: status, message, status: GOOGLE_STATUS[status], details } });
  const fake = serveFake(async (request, body) => {
    const path = new URL(request.url).pathname;
    if (request.method === "POST" && path === "/token") {
      const form = new URLSearchParams(body);
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
        return json(400, { error: "unsupported_grant_type", error_description: "Invalid grant_type" });
      }
      try {
        const { payload } = await jwtVerify(form.get("assertion") ?? "", options.publicKey, {
          algorithms: ["RS256"],
          issuer: options.clientEmail,
          audience: `${fake.url}/token`,
        });
        const scopes = String(payload.scope ?? "").split(" ");
        if (!scopes.includes("https://www.googleapis.com/auth/firebase.messaging")) {
          return json(400, { error: "invalid_scope", error_description: "Invalid OAuth scope" });
        }
      } catch {
        return json(400, { error: "invalid_grant", error_description: "Invalid JWT Signature." });
      }
      const accessToken = `ya29.${randomHex(24)}`;
      issuedTokens.push(accessToken);
      return json(200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
    }
    if (request.method !== "POST" || path !== `/v1/projects/${options.projectId}/messages:send`) {
      return googleError(404, "Requested entity was not found.");
    }
    const bearer = request.headers.get("authorization")?.replace(/^Bearer /, "");
    if (!bearer || !issuedTokens.includes(bearer)) {
      return googleError(401, "Request had invalid authentication credentials.");
    }
    const { message } = JSON.parse(body) as { message?: { token?: string } };
    const token = message?.token ?? "";
    const error = options.errors?.[token];
    if (error) {
      const details: unknown[] = [{
        "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError",
        errorCode: error.errorCode,
      }];
      if (error.tokenViolation) {
        details.push({
          "@type": "type.googleapis.com/google.rpc.BadRequest",
          fieldViolations: [{ field: "message.token", description: "Invalid registration token" }],
        });
      }
      const response = googleError(error.status, error.message, details);
      if (error.retryAfter) response.headers.set("retry-after", error.retryAfter);
      return response;
    }
    return json(200, { name: `projects/${options.projectId}/messages/0:${randomHex(8)}` });
  });
  return { ...fake, tokenUrl: `${fake.url}/token`, issuedTokens };
}

// --- APNs ---------------------------------------------------------------------------------------

/** An APNs error to answer for a device token, e.g. `{status: 410, reason: "Unregistered"}`. */
export interface ApnsErrorSpec {
  status: number;
  reason: string;
  /** Sent as a Retry-After header (Apple documents none; a proxy in front of it may send one). */
  retryAfter?: string;
}

/** A fake APNs, and what it knows of provider tokens. */
export interface FakeApns extends FakeServer {
  /** The distinct provider tokens it was sent, in the order it first saw them. */
  providerTokens: string[];
  /** Calls every provider token seen so far expired (403 ExpiredProviderToken), as APNs does after an hour. */
  expireProviderTokens(): void;
}

/**
 * Starts a fake APNs server: `POST /3/device/{token}` with a provider JWT (ES256, `kid`, `iss`)
 * verified with `publicKey`, and `apns-topic` equal to `bundleId`. A request to a device token for
 * which `hold` gives a promise is answered once it resolves.
 */
export function startFakeApns(
  options: {
    teamId: string;
    keyId: string;
    bundleId: string;
    publicKey: CryptoKey;
    errors?: Record<string, ApnsErrorSpec>;
    hold?: (deviceToken: string) => Promise<void> | undefined;
  },
): FakeApns {
  const providerTokens: string[] = [];
  const expired = new Set<string>();
  const apnsError = (status: number, reason: string, apnsId: string, retryAfter?: string) =>
    json(
      status,
      status === 410 ? { reason, timestamp: Date.now() } : { reason },
      retryAfter ? { "apns-id": apnsId, "retry-after": retryAfter } : { "apns-id": apnsId },
    );
  const fake = serveFake(async (request) => {
    const apnsId = request.headers.get("apns-id") ?? crypto.randomUUID().toUpperCase();
    const match = new URL(request.url).pathname.match(/^\/3\/device\/([^/]*)$/);
    if (match) await options.hold?.(match[1]);
    if (request.method !== "POST") return apnsError(405, "MethodNotAllowed", apnsId);
    if (!match) return apnsError(404, "BadPath", apnsId);
    const auth = request.headers.get("authorization");
    if (!auth?.startsWith("bearer ")) return apnsError(403, "MissingProviderToken", apnsId);
    try {
      const { protectedHeader } = await jwtVerify(auth.slice("bearer ".length), options.publicKey, {
        algorithms: ["ES256"],
        issuer: options.teamId,
        requiredClaims: ["iat"],
      });
      if (protectedHeader.kid !== options.keyId) throw new Error("wrong kid");
    } catch {
      return apnsError(403, "InvalidProviderToken", apnsId);
    }
    const providerToken = auth.slice("bearer ".length);
    if (!providerTokens.includes(providerToken)) providerTokens.push(providerToken);
    if (expired.has(providerToken)) return apnsError(403, "ExpiredProviderToken", apnsId);
    if (request.headers.get("apns-topic") !== options.bundleId) {
      return apnsError(400, "DeviceTokenNotForTopic", apnsId);
    }
    const collapseId = request.headers.get("apns-collapse-id");
    if (collapseId !== null && new TextEncoder().encode(collapseId).length > 64) {
      return apnsError(400, "BadCollapseId", apnsId);
    }
    const token = match[1];
    const error = options.errors?.[token];
    if (error) return apnsError(error.status, error.reason, apnsId, error.retryAfter);
    if (!/^[0-9a-f]{64}$/i.test(token)) return apnsError(400, "BadDeviceToken", apnsId);
    return new Response(null, { status: 200, headers: { "apns-id": apnsId } });
  });
  return {
    ...fake,
    providerTokens,
    expireProviderTokens: () => providerTokens.forEach((t) => expired.add(t)),
  };
}

// --- Keys ---------------------------------------------------------------------------------------

/** A freshly generated key pair: the private key as PKCS#8 PEM, the public key for verifying. */
export interface TestKeyPair {
  privateKeyPem: string;
  publicKey: CryptoKey;
}

/** Generates an RSA key like a Google service account's (RS256). */
export async function generateRsaKeyPair(): Promise<TestKeyPair> {
  const pair = await crypto.subtle.generateKey(
    {
      name: "RSASSA-PKCS1-v1_5",
      modulusLength: 2048,
      publicExponent: new Uint8Array([1, 0, 1]),
      hash: "SHA-256",
    },
    true,
    ["sign", "verify"],
  );
  return { privateKeyPem: await exportPKCS8(pair.privateKey), publicKey: pair.publicKey };
}

/** Generates a P-256 key like an APNs auth key (.p8, ES256). */
export async function generateP256KeyPair(): Promise<TestKeyPair> {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, true, [
    "sign",
    "verify",
  ]);
  return { privateKeyPem: await exportPKCS8(pair.privateKey), publicKey: pair.publicKey };
}
