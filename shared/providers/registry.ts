import type { Config } from "../config.ts";
import type { Db } from "../db.ts";
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
  const apns = config.APNS_TEAM_ID && config.APNS_KEY_ID && config.APNS_PRIVATE_KEY && config.APNS_BUNDLE_ID
    ? createApnsProvider({
      teamId: config.APNS_TEAM_ID,
      keyId: config.APNS_KEY_ID,
      privateKey: config.APNS_PRIVATE_KEY,
      bundleId: config.APNS_BUNDLE_ID,
      baseUrl: config.APNS_BASE_URL,
    })
    : undefined;
  if (fcm || apns) real.push = createPushProvider({ fcm, apns });
  return real;
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
