/**
 * A fake Vonage SMS API for tests: `POST /sms/json` with Basic auth (api_key:api_secret), answered as
 * Vonage answers, including its errors: a 200 whose message carries a non-zero `status` and an
 * `error-text`; and the account API's `GET /account/get-balance`.
 */
import { type FakeServer, json, randomHex, serveFake } from "./fake_servers.ts";

/** A Vonage per-message error, e.g. `{status: "1", errorText: "Throttled"}`. */
export interface VonageErrorSpec {
  status: string;
  errorText: string;
}

/** A message the fake Vonage accepted. */
export interface FakeVonageMessage {
  messageId: string;
  to: string;
  from: string;
  text: string;
  clientRef?: string;
}

/** A fake Vonage and the messages it accepted. */
export interface FakeVonage extends FakeServer {
  messages: FakeVonageMessage[];
}

/**
 * Starts a fake Vonage SMS API. `errors` (by recipient, without +) is read at each request; `httpErrors`
 * (by recipient) answers an HTTP status instead, as a gateway in front of the API would.
 */
export function startFakeVonage(
  options: {
    apiKey: string;
    apiSecret: string;
    errors?: Record<string, VonageErrorSpec>;
    httpErrors?: Record<string, number>;
  },
): FakeVonage {
  const messages: FakeVonageMessage[] = [];
  const failure = (to: string, status: string, errorText: string) =>
    json(200, { "message-count": "1", messages: [{ to, status, "error-text": errorText }] });
  const fake = serveFake((request, body) => {
    const url = new URL(request.url);
    if (request.method === "GET" && url.pathname === "/account/get-balance") {
      // The account API takes the key and secret in the query; a wrong pair is a 401.
      const query = url.searchParams;
      if (query.get("api_key") !== options.apiKey || query.get("api_secret") !== options.apiSecret) {
        return json(401, { "error-code": "401", "error-code-label": "authentication failed" });
      }
      return json(200, { value: 10.5, autoReload: false });
    }
    if (request.method !== "POST" || url.pathname !== "/sms/json") {
      return json(404, { type: "https://developer.vonage.com/api-errors#not-found", title: "Not Found" });
    }
    const params: Record<string, string> = request.headers.get("content-type")?.startsWith("application/json")
      ? JSON.parse(body)
      : Object.fromEntries(new URLSearchParams(body));
    const to = params.to ?? "";
    // Vonage takes the key and secret as Basic auth or in the body; a wrong pair is status 4, in a 200.
    const basic = `Basic ${btoa(`${options.apiKey}:${options.apiSecret}`)}`;
    const inBody = params.api_key === options.apiKey && params.api_secret === options.apiSecret;
    if (request.headers.get("authorization") !== basic && !inBody) return failure(to, "4", "Bad Credentials");
    if (!params.from) return failure(to, "2", "Missing from param");
    if (!to) return failure(to, "2", "Missing to param");
    if (!params.text) return failure(to, "2", "Missing text param");
    if (!/^\d{7,15}$/.test(to)) return failure(to, "3", "Invalid to param");
    const httpError = options.httpErrors?.[to];
    if (httpError) return json(httpError, { title: "Service Unavailable" });
    const error = options.errors?.[to];
    if (error) return failure(to, error.status, error.errorText);
    const messageId = crypto.randomUUID();
    messages.push({ messageId, to, from: params.from, text: params.text, clientRef: params["client-ref"] });
    return json(200, {
      "message-count": "1",
      messages: [{
        to,
        "message-id": messageId,
        status: "0",
        "remaining-balance": "10.00000000",
        "message-price": "0.03330000",
        network: `2340${randomHex(1)}`,
        "client-ref": params["client-ref"],
      }],
    });
  });
  return { ...fake, messages };
}
