/** Push through Firebase Cloud Messaging, HTTP v1 API over fetch. */
import { importPKCS8, SignJWT } from "jose";
import {
  networkFailure,
  type OutboundMessage,
  type Provider,
  ProviderError,
  retryAfterMs,
  type SendResult,
} from "./types.ts";

/** The fields of a Google service-account JSON key that FCM needs. */
export interface FcmServiceAccount {
  project_id: string;
  client_email: string;
  /** PKCS#8 PEM of the RSA key. */
  private_key: string;
  private_key_id?: string;
  token_uri?: string;
}

/** Options of {@linkcode createFcmProvider}. */
export interface FcmProviderOptions {
  serviceAccount: FcmServiceAccount;
  /** API base URL (instead of `https://fcm.googleapis.com`); a fake server's in tests. */
  baseUrl?: string;
  /** OAuth2 token endpoint; defaults to the service account's `token_uri`. */
  tokenUrl?: string;
  /** Per-request timeout, in milliseconds. */
  timeoutMs?: number;
}

const DEFAULT_BASE_URL = "https://fcm.googleapis.com";
export const DEFAULT_TOKEN_URL = "https://oauth2.googleapis.com/token";
const FCM_SCOPE = "https://www.googleapis.com/auth/firebase.messaging";
/** Renew the access token this long before Google says it expires. */
const REFRESH_MARGIN_MS = 5 * 60_000;

/** Creates the push provider that sends to Android, iOS and web device tokens through FCM. */
export function createFcmProvider(options: FcmProviderOptions): Provider {
  const account = options.serviceAccount;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const baseUrl = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, "");
  const endpoint = `${baseUrl}/v1/projects/${encodeURIComponent(account.project_id)}/messages:send`;
  const accessToken = createAccessTokenSource(
    account,
    options.tokenUrl ?? account.token_uri ?? DEFAULT_TOKEN_URL,
    timeoutMs,
  );

  async function post(body: string, token: string): Promise<Response> {
    return await fetchOrTemporary("Cannot send push", endpoint, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
  }

  return {
    name: "fcm",
    resendable: true,
    async send(message: OutboundMessage): Promise<SendResult> {
      const body = JSON.stringify({ message: fcmMessage(message) });
      const token = await accessToken.get();
      let response = await post(body, token);
      if (response.status === 401) {
        const error = await fcmError(response);
        // THIRD_PARTY_AUTH_ERROR is about the APNs certificate or web push key kept in Firebase, not
        // our access token: a new token would not help, and fetching one a message floods Google.
        if (error.providerCode === "THIRD_PARTY_AUTH_ERROR") throw error;
        // Our access token was revoked or expired early: one new one for every send that met it.
        response = await post(body, await accessToken.renew(token));
      }
      if (!response.ok) throw await fcmError(response);
      const { name } = await response.json() as { name: string };
      return { providerMessageId: name };
    },
  };
}

/**
 * The FCM v1 `message` for one device token. Its notification `tag` is our message id: handed over
 * again (after a crash), it replaces the first in the device's notification drawer.
 */
function fcmMessage(message: OutboundMessage) {
  const high = message.priority !== "normal";
  const link = message.clickAction?.startsWith("https://") ? message.clickAction : undefined;
  return {
    token: message.to,
    notification: { title: message.title, body: message.text, image: message.imageUrl },
    data: message.data,
    android: {
      priority: high ? "HIGH" : "NORMAL",
      notification: { tag: message.id, click_action: message.clickAction },
    },
    apns: {
      headers: { "apns-priority": high ? "10" : "5" },
      payload: {
        aps: {
          category: message.clickAction,
          "mutable-content": message.imageUrl ? 1 : undefined,
        },
      },
      fcm_options: message.imageUrl ? { image: message.imageUrl } : undefined,
    },
    webpush: {
      notification: { tag: message.id, actions: message.actions },
      fcm_options: link ? { link } : undefined,
    },
  };
}

interface GoogleErrorDetail {
  "@type"?: string;
  errorCode?: string;
  fieldViolations?: { field?: string; description?: string }[];
}

async function fcmError(response: Response): Promise<ProviderError> {
  const text = await response.text();
  let error: { message?: string; status?: string; details?: GoogleErrorDetail[] } = {};
  try {
    error = JSON.parse(text).error ?? {};
  } catch {
    // Not JSON (a proxy's error page): the HTTP status says enough.
  }
  const details = error.details ?? [];
  const code = details.find((d) => d["@type"]?.endsWith("google.firebase.fcm.v1.FcmError"))
    ?.errorCode ?? error.status;
  const aboutToken = details.some((d) => d.fieldViolations?.some((v) => v.field === "message.token")) ||
    /registration token/i.test(error.message ?? "");
  const temporary = response.status === 429 || response.status >= 500;
  // FCM: honour Retry-After; over the message-rate quota, wait at least a minute.
  const asked = retryAfterMs(response.headers.get("retry-after"));
  return new ProviderError(`Cannot send push: ${error.message ?? (text || response.statusText)}`, {
    temporary,
    invalidToken: code === "UNREGISTERED" || (code === "INVALID_ARGUMENT" && aboutToken),
    providerCode: code,
    retryAfterMs: !temporary ? undefined : code === "QUOTA_EXCEEDED" ? Math.max(60_000, asked ?? 0) : asked,
  });
}

/** An OAuth2 access token for the service account, cached until shortly before it expires. */
export function createAccessTokenSource(account: FcmServiceAccount, tokenUrl: string, timeoutMs: number) {
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;
  let signingKey: Promise<CryptoKey> | undefined;

  async function sign(): Promise<string> {
    try {
      // Keys pasted into an environment variable often keep their newlines as `\n`.
      signingKey ??= importPKCS8(account.private_key.replaceAll("\\n", "\n"), "RS256");
      return await new SignJWT({ scope: FCM_SCOPE })
        .setProtectedHeader({ alg: "RS256", typ: "JWT", kid: account.private_key_id })
        .setIssuer(account.client_email)
        .setAudience(tokenUrl)
        .setIssuedAt()
        .setExpirationTime("1h")
        .sign(await signingKey);
    } catch (error) {
      throw new ProviderError(`Cannot sign the FCM token request: ${(error as Error).message}`);
    }
  }

  async function exchange(): Promise<string> {
    const assertion = await sign();
    const response = await fetchOrTemporary("Cannot get an FCM access token", tokenUrl, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer",
        assertion,
      }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const body = await response.json().catch(() => ({})) as {
      access_token?: string;
      expires_in?: number;
      error?: string;
      error_description?: string;
    };
    if (!response.ok || !body.access_token) {
      throw new ProviderError(
        `Cannot get an FCM access token: ${body.error_description ?? body.error ?? response.status}`,
        {
          temporary: response.status === 429 || response.status >= 500,
          providerCode: body.error,
        },
      );
    }
    const lifetimeMs = (body.expires_in ?? 3600) * 1000;
    cached = { token: body.access_token, renewAt: Date.now() + lifetimeMs - REFRESH_MARGIN_MS };
    return body.access_token;
  }

  return {
    get(): Promise<string> {
      if (cached && Date.now() < cached.renewAt) return Promise.resolve(cached.token);
      // Concurrent sends share one exchange.
      pending ??= exchange().finally(() => pending = undefined);
      return pending;
    },
    /** A token to use instead of `rejected` (a new one, unless another send has renewed it already). */
    renew(rejected: string): Promise<string> {
      if (cached?.token === rejected) cached = undefined;
      return this.get();
    },
  };
}

/** `fetch`, with a network failure or timeout turned into a temporary ProviderError (networkFailure). */
async function fetchOrTemporary(
  context: string,
  url: string,
  init: RequestInit,
): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    throw networkFailure(context, error);
  }
}
