/**
 * The HTTP transport of the Twilio SDK, over `fetch`. The SDK builds each request (URL, form
 * fields, headers) and reads each answer (resources, pages, `RestException`) itself; it hands the
 * request to an `httpClient`, by default axios over `node:http`, which under Deno more than doubles
 * the CPU the SDK spends a message (docs/performance.md, "Twilio's transport"). Twilio documents
 * the `httpClient` option as the place for a custom client.
 */
import twilio from "twilio";

/** The SDK's `RequestClient.RequestOptions` (its namespace is not re-exported). */
type RequestOptions = Parameters<InstanceType<typeof twilio.RequestClient>["request"]>[0];

/** What the SDK expects back from its `httpClient`. */
interface TransportAnswer {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

/** No answer from Twilio: `mayHaveReached` is false when the connection was never made (nothing was sent). */
export class TwilioTransportError extends Error {
  readonly mayHaveReached: boolean;

  constructor(message: string, mayHaveReached: boolean) {
    super(message);
    this.name = "TwilioTransportError";
    this.mayHaveReached = mayHaveReached;
  }
}

/** Twilio's default request timeout (the SDK's own). */
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * The SDK's `RequestClient` with `request` over `fetch`. `baseUrl` replaces the origin of every URL
 * the SDK builds (Twilio offers only `edge`/`region`, which rewrite the host name inside
 * `twilio.com`), for a fake server in tests or a proxy.
 */
export class FetchRequestClient extends twilio.RequestClient {
  readonly #base?: URL;
  readonly #timeoutMs: number;

  constructor(options: { baseUrl?: string; timeoutMs?: number } = {}) {
    super({ timeout: options.timeoutMs });
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    if (options.baseUrl) this.#base = new URL(options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`);
  }

  // deno-lint-ignore no-explicit-any -- the SDK's signature is generic over the data it never reads back
  override async request(opts: RequestOptions): Promise<any> {
    const url = this.#urlOf(opts);
    const headers = new Headers();
    for (const [name, value] of Object.entries(opts.headers ?? {})) {
      if (name.toLowerCase() !== "connection" && value !== undefined) headers.set(name, String(value));
    }
    if (opts.username && opts.password) {
      headers.set("Authorization", `Basic ${btoa(`${opts.username}:${opts.password}`)}`);
    } else if (opts.authStrategy) headers.set("Authorization", await opts.authStrategy.getAuthString());
    const body = opts.data && headers.get("content-type") === "application/x-www-form-urlencoded"
      ? formOf(opts.data as Record<string, unknown>)
      : opts.data
      ? JSON.stringify(opts.data)
      : undefined;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: opts.method.toUpperCase(),
        headers,
        body,
        redirect: opts.allowRedirects ? "follow" : "manual",
        signal: AbortSignal.timeout(opts.timeout ?? this.#timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      throw transportError(err);
    }
    const answer: TransportAnswer = { statusCode: response.status, body: text, headers: {} };
    response.headers.forEach((value, name) => (answer.headers[name] = value));
    return answer;
  }

  #urlOf(opts: RequestOptions): URL {
    const built = new URL(opts.uri);
    const url = this.#base ? new URL(`.${built.pathname}${built.search}`, this.#base) : built;
    if (opts.params) {
      for (const [name, value] of formOf(opts.params as Record<string, unknown>)) url.searchParams.append(name, value);
    }
    return url;
  }
}

/** The SDK's form encoding (`qs` with `arrayFormat: "repeat"`): a list repeats its field. */
function formOf(data: Record<string, unknown>): URLSearchParams {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(data)) {
    if (value === undefined || value === null) continue;
    for (const item of Array.isArray(value) ? value : [value]) {
      form.append(name, item instanceof Date ? item.toISOString() : String(item));
    }
  }
  return form;
}

/**
 * A `fetch` failure as a TwilioTransportError. Deno names the stage in its cause: a failure while
 * connecting ("client error (Connect)": refused, no such host, unreachable) sent nothing; any later
 * one (a connection closed mid-request, the timeout) may have left the request with Twilio.
 */
function transportError(err: unknown): TwilioTransportError {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : "";
  const message = cause || (err instanceof Error ? err.message : String(err));
  return new TwilioTransportError(message, !cause.includes("client error (Connect)"));
}
