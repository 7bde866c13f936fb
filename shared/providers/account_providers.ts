/**
 * The provider clients of a team's channel accounts, in the order failover tries them, with the
 * service's default provider, when one is configured, last (shared/providers/failover.ts).
 */
import { type ChannelAccount, channelAccountsKey, loadChannelAccounts, SealedElsewhere } from "../channel_accounts.ts";
import type { Config } from "../config.ts";
import { pushServiceOf } from "../contacts/device_tokens.ts";
import type { Db } from "../db.ts";
import { log } from "../log.ts";
import { createApnsProvider } from "./apns.ts";
import type { CredentialsOf } from "./credentials.ts";
import type { FailoverAccount } from "./failover.ts";
import { createFcmProvider } from "./fcm.ts";
import { hasDefaultProvider, type Providers } from "./registry.ts";
import { createResendProvider } from "./resend.ts";
import { createSesProvider } from "./ses.ts";
import { createSmtpProvider } from "./smtp.ts";
import { createTwilioProvider } from "./twilio.ts";
import type { Channel, OutboundMessage, Provider } from "./types.ts";
import { createVonageProvider } from "./vonage.ts";

/** Clients built, by account id and version: an SDK client (its pools, its tokens) is built once per PUT. */
const clients = new Map<string, { version: number; provider: Provider }>();

/** The provider client of one account, its `from` (when set) replacing the message's sender. */
export function accountProvider(account: ChannelAccount): Provider {
  const cached = clients.get(account.id);
  if (cached?.version === account.updatedAt) return cached.provider;
  const provider = withSender(buildClient(account), account.credentials.from as string | undefined);
  clients.set(account.id, { version: account.updatedAt, provider });
  return provider;
}

function buildClient(account: ChannelAccount): Provider {
  const baseUrl = account.baseUrl;
  switch (account.provider) {
    case "twilio": {
      const c = account.credentials as CredentialsOf<"twilio">;
      // No status callback: Twilio signs it with the team's token, which our callback route cannot check.
      return createTwilioProvider({ accountSid: c.account_sid, authToken: c.auth_token, baseUrl });
    }
    case "vonage": {
      const c = account.credentials as CredentialsOf<"vonage">;
      return createVonageProvider({ apiKey: c.api_key, apiSecret: c.api_secret, baseUrl });
    }
    case "resend":
      return createResendProvider({ apiKey: (account.credentials as CredentialsOf<"resend">).api_key, baseUrl });
    case "ses": {
      const c = account.credentials as CredentialsOf<"ses">;
      return createSesProvider({
        region: c.region,
        accessKeyId: c.access_key_id,
        secretAccessKey: c.secret_access_key,
        configurationSet: c.configuration_set,
        baseUrl,
      });
    }
    case "smtp": {
      const c = account.credentials as CredentialsOf<"smtp">;
      return createSmtpProvider({ ...c, port: c.port ?? 587 });
    }
    case "fcm": {
      const c = account.credentials as CredentialsOf<"fcm">;
      return createFcmProvider({ serviceAccount: c, baseUrl });
    }
    case "apns": {
      const c = account.credentials as CredentialsOf<"apns">;
      return createApnsProvider({
        teamId: c.team_id,
        keyId: c.key_id,
        privateKey: c.private_key,
        bundleId: c.bundle_id,
        baseUrl,
      });
    }
  }
}

function withSender(provider: Provider, from: string | undefined): Provider {
  if (!from) return provider;
  // The log is searched for what was sent: from this sender, after a crash (worker/failover_send.ts).
  const find = provider.find;
  return {
    ...provider,
    send: (message) => provider.send({ ...message, from }),
    find: find && ((message, window) => find({ ...message, from }, window)),
  };
}

/** A push account carries only the tokens of its own service (an FCM account cannot reach an APNs token). */
function pushFilter(account: ChannelAccount): ((message: OutboundMessage) => boolean) | undefined {
  if (account.provider !== "fcm" && account.provider !== "apns") return undefined;
  return (message) => (message.pushService ?? pushServiceOf(message.to, message.platform)) === account.provider;
}

/**
 * What failover takes for a live message of `teamId` on `channel`: the team's accounts in priority
 * order, then the service's default provider (`default:<channel>`) when one is configured, and
 * whether the team lets a timed-out hand-over go on to the next. The outbox is never a failover
 * target: a message the team's accounts refused would otherwise be recorded sent without being
 * sent. Without CHANNEL_ACCOUNTS_KEY, the default alone.
 */
export async function failoverAccounts(
  deps: { sql: Db; config: Config; providers: Providers },
  teamId: string,
  channel: Channel,
): Promise<{ accounts: FailoverAccount[]; failoverOnTimeout: boolean }> {
  const fallback: FailoverAccount[] = hasDefaultProvider(deps.providers, channel)
    ? [{ id: `default:${channel}`, provider: deps.providers.get(channel, { sandbox: false }) }]
    : [];
  if (!deps.config.CHANNEL_ACCOUNTS_KEY) return { accounts: fallback, failoverOnTimeout: false };
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  let team: Awaited<ReturnType<typeof loadChannelAccounts>>;
  try {
    team = await loadChannelAccounts(deps.sql, key, teamId, channel);
  } catch (error) {
    // The database away: the pass fails and runs again later. Sending through the default instead
    // would hand a message to a provider the team did not choose, and a later pass, with the accounts
    // readable again, could hand it to one of them too.
    if (!(error instanceof SealedElsewhere)) throw error;
    // Sealed under another key (CHANNEL_ACCOUNTS_KEY changed or lost): the operator must put them again.
    log("warn", "channel accounts cannot be opened: sending through the default provider", {
      team_id: teamId,
      channel,
      error: String(error),
    });
    return { accounts: fallback, failoverOnTimeout: false };
  }
  const accounts = team.accounts.map((a): FailoverAccount => ({
    id: a.id,
    provider: accountProvider(a),
    canSend: pushFilter(a),
  }));
  return { accounts: [...accounts, ...fallback], failoverOnTimeout: team.failoverOnTimeout };
}
