import type { Config } from "../config.ts";
import type { Db } from "../db.ts";
import { log } from "../log.ts";
import { createApnsProvider } from "./apns.ts";
import { createFcmProvider, type FcmServiceAccount } from "./fcm.ts";
import { OutboxProvider } from "./outbox.ts";
import { createPushProvider } from "./push.ts";
import { createResendProvider } from "./resend.ts";
import { createTwilioProvider } from "./twilio.ts";
import type { Channel, Provider } from "./types.ts";

/** Chooses the provider of each channel: the outbox for sandbox (test-key) sends and unconfigured channels. */
export interface Providers {
  get(channel: Channel, options: { sandbox: boolean }): Provider;
  readonly outbox: OutboxProvider;
}

/**
 * The URL Twilio posts a team's message statuses to (POST /api/v1/inbound/twilio/status), on the
 * service's PUBLIC_URL; undefined without one (Twilio then reports to the number's own settings).
 */
export function twilioStatusCallback(config: Config): ((teamId: string) => string) | undefined {
  const base = config.PUBLIC_URL?.replace(/\/+$/, "");
  if (!base) return undefined;
  return (teamId) => `${base}/api/v1/inbound/twilio/status?team_id=${encodeURIComponent(teamId)}`;
}

/** The real providers the configuration has credentials for, by channel. */
export function realProviders(config: Config): Partial<Record<Channel, Provider>> {
  const real: Partial<Record<Channel, Provider>> = {};
  if (config.RESEND_API_KEY) {
    real.email = createResendProvider({ apiKey: config.RESEND_API_KEY, baseUrl: config.RESEND_BASE_URL });
  }
  if (config.TWILIO_ACCOUNT_SID && config.TWILIO_AUTH_TOKEN) {
    const twilio = createTwilioProvider({
      accountSid: config.TWILIO_ACCOUNT_SID,
      authToken: config.TWILIO_AUTH_TOKEN,
      baseUrl: config.TWILIO_BASE_URL,
      statusCallback: twilioStatusCallback(config),
    });
    real.sms = twilio;
    real.whatsapp = twilio;
  }
  const fcm = config.FCM_SERVICE_ACCOUNT
    ? createFcmProvider({
      serviceAccount: JSON.parse(config.FCM_SERVICE_ACCOUNT) as FcmServiceAccount,
      baseUrl: config.FCM_BASE_URL,
    })
    : undefined;
  const apns = apnsConfigured(config)
    ? createApnsProvider({
      teamId: config.APNS_TEAM_ID!,
      keyId: config.APNS_KEY_ID!,
      privateKey: config.APNS_PRIVATE_KEY!,
      bundleId: config.APNS_BUNDLE_ID!,
      baseUrl: config.APNS_BASE_URL,
    })
    : undefined;
  if (fcm || apns) real.push = createPushProvider({ fcm, apns });
  return real;
}

function apnsConfigured(config: Config): boolean {
  return Boolean(config.APNS_TEAM_ID && config.APNS_KEY_ID && config.APNS_PRIVATE_KEY && config.APNS_BUNDLE_ID);
}

/** Where a channel's live messages go when no provider is configured for it. */
export const NO_PROVIDER = "outbox: no provider configured";

/**
 * Where each channel's live-key messages go (what the start-up log says): the provider, or the
 * outbox when none is configured, so that an operator sees a silent outbox before any send.
 */
export function messageRoutes(config: Config): Record<Channel, string> {
  const real = realProviders(config);
  const route = (channel: Channel) => real[channel]?.name ?? NO_PROVIDER;
  const push = real.push
    ? `fcm: ${config.FCM_SERVICE_ACCOUNT ? "android and web" : "not configured"}; ` +
      `apns: ${apnsConfigured(config) ? "ios" : "not configured"}`
    : NO_PROVIDER;
  return { email: route("email"), sms: route("sms"), whatsapp: route("whatsapp"), push };
}

/**
 * The start-up log line that says where each channel's live-key messages go (and test keys': the
 * outbox); a warning when some channel has no provider, so that it is not missed in production.
 */
export function logMessageRoutes(config: Config): void {
  const live = messageRoutes(config);
  const level = Object.values(live).includes(NO_PROVIDER) ? "warn" : "info";
  log(level, "message routes", { live, test_keys: "outbox", outbox_billed: config.BILL_OUTBOX });
}

/**
 * True when a live-key message on `channel` goes to the outbox only because no provider is
 * configured for it: it is then not charged (nothing was sent) and its record says so, unless
 * BILL_OUTBOX asks that the outbox be billed like a provider (tests, billing demos).
 */
export function outboxForWantOfProvider(
  deps: { config: Config; providers: Providers },
  channel: Channel,
  sandbox: boolean,
): boolean {
  if (sandbox || deps.config.BILL_OUTBOX) return false;
  return !hasDefaultProvider(deps.providers, channel);
}

/** True when the service has a provider of its own for live messages of `channel` (not the outbox). */
export function hasDefaultProvider(providers: Providers, channel: Channel): boolean {
  return providers.get(channel, { sandbox: false }) !== providers.outbox;
}

/** What a message kept in the outbox for want of a provider says (its record, the send's answer). */
export function noProviderNote(channel: Channel): string {
  return `No provider is configured for ${channel}: messages are kept in the outbox and not charged`;
}

/** Builds the providers from configuration (real ones where credentials are set). */
export function createProviders(config: Config, db: Db): Providers {
  const outbox = new OutboxProvider(db);
  const real = realProviders(config);
  return {
    outbox,
    get(channel, { sandbox }) {
      return sandbox ? outbox : real[channel] ?? outbox;
    },
  };
}
