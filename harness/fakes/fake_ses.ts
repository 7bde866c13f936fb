/**
 * A fake Amazon SES API v2 for tests: `POST /v2/email/outbound-emails` (and `GET /v2/email/account`) signed with AWS Signature
 * Version 4 (the signature is checked against the secret key), answered as SES answers, including its
 * errors: an HTTP status, the error's name in `x-amzn-ErrorType` and `{message}` in the body.
 */
import { type FakeServer, json, randomHex, serveFake } from "./fake_servers.ts";

/** An SES error to answer for a recipient, e.g. `{status: 400, type: "MessageRejected", message: "…"}`. */
export interface SesErrorSpec {
  status: number;
  type: string;
  message: string;
}

/** An email the fake SES accepted: its SendEmail request body. */
export interface FakeSesEmail {
  messageId: string;
  request: {
    FromEmailAddress?: string;
    Destination?: { ToAddresses?: string[] };
    ConfigurationSetName?: string;
    Content?: {
      Simple?: { Subject?: { Data?: string }; Body?: { Text?: { Data?: string }; Html?: { Data?: string } } };
    };
  };
}

/** A fake SES and the emails it accepted. */
export interface FakeSes extends FakeServer {
  emails: FakeSesEmail[];
}

/** Starts a fake SES v2. `errors` (by recipient) is read at each request. */
export function startFakeSes(
  options: { region: string; accessKeyId: string; secretAccessKey: string; errors?: Record<string, SesErrorSpec> },
): FakeSes {
  const emails: FakeSesEmail[] = [];
  const sesError = (status: number, type: string, message: string) =>
    json(status, { message }, { "x-amzn-ErrorType": `${type}:http://internal.amazon.com/coral/com.amazon.bacon/` });
  const fake = serveFake(async (request, body) => {
    const url = new URL(request.url);
    const account = request.method === "GET" && url.pathname === "/v2/email/account";
    if (!account && (request.method !== "POST" || url.pathname !== "/v2/email/outbound-emails")) {
      return sesError(404, "NotFoundException", "Not found");
    }
    const refusal = await signatureRefusal(request, url, body, options);
    if (refusal) return sesError(403, refusal.type, refusal.message);
    if (account) {
      return json(200, {
        SendingEnabled: true,
        ProductionAccessEnabled: false,
        EnforcementStatus: "HEALTHY",
        SendQuota: { Max24HourSend: 200, MaxSendRate: 1, SentLast24Hours: emails.length },
      });
    }
    const email = JSON.parse(body) as FakeSesEmail["request"];
    const to = email.Destination?.ToAddresses ?? [];
    if (!email.FromEmailAddress || to.length === 0 || !email.Content?.Simple) {
      return sesError(400, "BadRequestException", "Missing FromEmailAddress, Destination or Content");
    }
    const error = to.map((address) => options.errors?.[address]).find(Boolean);
    if (error) return sesError(error.status, error.type, error.message);
    const messageId = `0100${randomHex(8)}-${crypto.randomUUID()}-000000`;
    emails.push({ messageId, request: email });
    return json(200, { MessageId: messageId });
  });
  return { ...fake, emails };
}

/** Why the request's SigV4 signature is not right for these credentials, or undefined when it is. */
async function signatureRefusal(
  request: Request,
  url: URL,
  body: string,
  credentials: { region: string; accessKeyId: string; secretAccessKey: string },
): Promise<{ type: string; message: string } | undefined> {
  const auth = request.headers.get("authorization") ?? "";
  const match = auth.match(
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/ses\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/,
  );
  if (!match) return { type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" };
  const [, keyId, day, region, signedHeaders, signature] = match;
  if (keyId !== credentials.accessKeyId) {
    return { type: "UnrecognizedClientException", message: "The security token included in the request is invalid." };
  }
  if (region !== credentials.region) {
    return { type: "SignatureDoesNotMatch", message: "Credential should be scoped to a valid region." };
  }
  const amzDate = request.headers.get("x-amz-date") ?? "";
  const canonicalHeaders = signedHeaders.split(";").map((h) =>
    `${h}:${(request.headers.get(h) ?? "").trim().replace(/\s+/g, " ")}\n`
  ).join("");
  const query = [...url.searchParams].map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).sort().join(
    "&",
  );
  const canonicalRequest = [request.method, url.pathname, query, canonicalHeaders, signedHeaders, await sha256Hex(body)]
    .join("\n");
  const scope = `${day}/${region}/ses/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, await sha256Hex(canonicalRequest)].join("\n");
  let key: ArrayBuffer = new TextEncoder().encode(`AWS4${credentials.secretAccessKey}`).buffer as ArrayBuffer;
  for (const part of [day, region, "ses", "aws4_request"]) key = await hmac(key, part);
  const expected = toHex(await hmac(key, stringToSign));
  if (expected !== signature) {
    return {
      type: "SignatureDoesNotMatch",
      message: "The request signature we calculated does not match the signature you provided.",
    };
  }
  return undefined;
}

async function hmac(key: ArrayBuffer, data: string): Promise<ArrayBuffer> {
  const cryptoKey = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return await crypto.subtle.sign("HMAC", cryptoKey, new TextEncoder().encode(data));
}

async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)));
}

function toHex(bytes: ArrayBuffer): string {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, "0")).join("");
}
