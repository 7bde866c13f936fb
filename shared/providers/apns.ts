/** Push to iOS devices through Apple Push Notification service, token-based auth over fetch. */
import { importPKCS8, SignJWT } from "jose";
import {
  networkFailure,
  type OutboundMessage,
  type Provider,
  ProviderError,
  retryAfterMs,
  type SendResult,
} from "./types.ts";

/** Options of {@linkcode createApnsProvider}. */
export interface ApnsProviderOptions {
  teamId: string;
  /** Id of the APNs auth key (the `kid` of the provider token). */
  keyId: string;
  /** The APNs auth key (.p8): PKCS#8 PEM of a P-256 key. */
  privateKey: string;
  /** The app's bundle id, sent as `apns-topic`. */
  bundleId: string;
  /** Defaults to production, `https://api.push.apple.com`; a fake server's in tests. */
  baseUrl?: string;
  /** Per-request timeout, in milliseconds. */
  timeoutMs?: number;
}

const DEFAULT_BASE_URL = "https://api.push.apple.com";
/** Apple refuses provider tokens older than an hour and refreshes more often than every 20 minutes. */
const TOKEN_LIFETIME_MS = 50 * 60_000;

/**
 * Creates the push provider for iOS device tokens. Deno's fetch negotiates HTTP/2, which APNs
 * requires, over TLS; a plain-HTTP fake server on loopback is spoken to in HTTP/1.1.
 */
export function createApnsProvider(options: ApnsProviderOptions): Provider {
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 15_000;
  const providerToken = createProviderTokenSource(options);

  async function post(message: OutboundMessage, apnsId: string, token: string): Promise<Response> {
    const high = message.priority !== "normal";
    try {
      return await fetch(`${baseUrl}/3/device/${encodeURIComponent(message.to)}`, {
        method: "POST",
        headers: {
          authorization: `bearer ${token}`,
          "apns-topic": options.bundleId,
          "apns-push-type": "alert",
          "apns-priority": high ? "10" : "5",
          "apns-id": apnsId,
          // Our message id: a second hand-over of it (after a crash) replaces the first on the device.
          "apns-collapse-id": message.id,
          "content-type": "application/json",
        },
        body: JSON.stringify(apnsPayload(message)),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw networkFailure("Cannot send push", error);
    }
  }

  return {
    name: "apns",
    resendable: true,
    async send(message: OutboundMessage): Promise<SendResult> {
      const apnsId = crypto.randomUUID();
      const token = await providerToken.get();
      let response = await post(message, apnsId, token);
      if (response.status === 403) {
        const reason = await reasonOf(response);
        if (reason !== "ExpiredProviderToken") throw apnsError(response, reason);
        // Our cached provider token outlived Apple's clock: one new one for every send that met it.
        response = await post(message, apnsId, await providerToken.renew(token));
      }
      if (!response.ok) throw apnsError(response, await reasonOf(response));
      await response.body?.cancel();
      return { providerMessageId: response.headers.get("apns-id") ?? apnsId };
    },
  };
}

/** The APNs JSON payload: custom data at the top level beside `aps`. */
function apnsPayload(message: OutboundMessage) {
  return {
    ...message.data,
    aps: {
      alert: { title: message.title, body: message.text },
      category: message.clickAction,
      "mutable-content": message.imageUrl ? 1 : undefined,
    },
  };
}

async function reasonOf(response: Response): Promise<string | undefined> {
  const body = await response.json().catch(() => ({})) as { reason?: string };
  return body.reason;
}

/**
 * A refusal of APNs. Only a 410 (`Unregistered`, `ExpiredToken`) says the device token will never work
 * again: Apple answers `BadDeviceToken` also for a valid token sent to the other environment (sandbox
 * or production) and `DeviceTokenNotForTopic` for a wrong bundle id, and removing tokens on those
 * would wipe every iOS device of every team on the first send after a configuration mistake.
 */
function apnsError(response: Response, reason: string | undefined): ProviderError {
  const status = response.status;
  const temporary = status === 429 || status >= 500;
  return new ProviderError(`Cannot send push: APNs answered ${status} ${reason ?? ""}`.trimEnd(), {
    temporary,
    invalidToken: status === 410,
    providerCode: reason,
    // Apple documents none, but a proxy or load balancer in front of it may say when to come back.
    retryAfterMs: temporary ? retryAfterMs(response.headers.get("retry-after")) : undefined,
  });
}

/**
 * The ES256 provider token, signed once and reused for {@linkcode TOKEN_LIFETIME_MS}. Concurrent
 * sends share one signing, and a token APNs called expired is replaced once, however many sends met
 * it: Apple refuses more than one new token every 20 minutes (`TooManyProviderTokenUpdates`).
 */
function createProviderTokenSource(options: ApnsProviderOptions) {
  /** `value` once signed: a send only ever holds a signed token, so a pending one is newer than it. */
  let cached: { token: Promise<string>; value?: string; renewAt: number } | undefined;
  let signingKey: Promise<CryptoKey> | undefined;

  async function sign(): Promise<string> {
    try {
      // Keys pasted into an environment variable often keep their newlines as `\n`.
      signingKey ??= importPKCS8(options.privateKey.replaceAll("\\n", "\n"), "ES256");
      return await new SignJWT({})
        .setProtectedHeader({ alg: "ES256", kid: options.keyId })
        .setIssuer(options.teamId)
        .setIssuedAt()
        .sign(await signingKey);
    } catch (error) {
      throw new ProviderError(`Cannot sign the APNs provider token: ${(error as Error).message}`);
    }
  }

  function fresh(): Promise<string> {
    const entry: NonNullable<typeof cached> = { token: sign(), renewAt: Date.now() + TOKEN_LIFETIME_MS };
    cached = entry;
    entry.token.then((value) => entry.value = value, () => {
      // A failed signing is not kept: the next send signs again.
      if (cached === entry) cached = undefined;
    });
    return entry.token;
  }

  return {
    get(): Promise<string> {
      return cached && Date.now() < cached.renewAt ? cached.token : fresh();
    },
    /** A token to use instead of `expired` (a new one, unless another send has renewed it already). */
    renew(expired: string): Promise<string> {
      return cached && cached.value !== expired ? cached.token : fresh();
    },
  };
}
