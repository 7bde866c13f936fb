import { createRoute, z } from "@hono/zod-openapi";
import {
  type ChannelAccountList,
  channelAccountsKey,
  listChannelAccounts,
  MissingKeyError,
  putChannelAccounts,
} from "../../shared/channel_accounts.ts";
import type { Deps } from "../../shared/deps.ts";
import { ValidationError } from "../../shared/errors.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { newRouter } from "../../shared/http/app.ts";
import { jsonBody, jsonResponse, timestamp } from "../../shared/http/schemas.ts";
import { log } from "../../shared/log.ts";
import { carries, CREDENTIAL_SCHEMAS, PROVIDERS_BY_CHANNEL } from "../../shared/providers/credentials.ts";
import { urlRefusal } from "../../shared/ssrf.ts";
import { requireTeam } from "./queries.ts";
import { ADMIN, BadRequest, ChannelSchema, NotFound, TeamParam, Unauthorized } from "./schemas.ts";

const baseUrl = z.url().max(2048).optional().openapi({
  description: "The provider's API base URL instead of its default (a regional endpoint, a test server); " +
    "private addresses are refused unless WEBHOOK_ALLOW_PRIVATE=1",
});

/** One account: its provider, that provider's credentials, and optionally where to reach it. */
export const AccountBody = z.discriminatedUnion("provider", [
  z.strictObject({ provider: z.literal("twilio"), credentials: CREDENTIAL_SCHEMAS.twilio, base_url: baseUrl }),
  z.strictObject({ provider: z.literal("vonage"), credentials: CREDENTIAL_SCHEMAS.vonage, base_url: baseUrl }),
  z.strictObject({ provider: z.literal("resend"), credentials: CREDENTIAL_SCHEMAS.resend, base_url: baseUrl }),
  z.strictObject({ provider: z.literal("ses"), credentials: CREDENTIAL_SCHEMAS.ses, base_url: baseUrl }),
  z.strictObject({ provider: z.literal("smtp"), credentials: CREDENTIAL_SCHEMAS.smtp }),
  z.strictObject({ provider: z.literal("fcm"), credentials: CREDENTIAL_SCHEMAS.fcm, base_url: baseUrl }),
  z.strictObject({ provider: z.literal("apns"), credentials: CREDENTIAL_SCHEMAS.apns, base_url: baseUrl }),
]);

/** `PUT /teams/{team_id}/channel-accounts/{channel}` body. */
const ChannelAccountsBody = z.strictObject({
  accounts: z.array(AccountBody).max(5).openapi({ description: "Tried in this order; [] removes them all" }),
  failover_on_timeout: z.boolean().optional().openapi({
    description: "Let a message whose hand-over timed out go to the next account (default false: the " +
      "first account may have taken it, and the recipient could get it twice)",
  }),
}).openapi("AdminChannelAccountsInput");

/** The accounts of a channel, secrets masked. */
const ChannelAccountsSchema = z.object({
  channel: ChannelSchema,
  failover_on_timeout: z.boolean(),
  accounts: z.array(z.object({
    id: z.string(),
    priority: z.number(),
    provider: z.string(),
    base_url: z.string().nullable(),
    credentials: z.record(z.string(), z.unknown()).openapi({
      description: "Secrets shown as ****, or **** and their last 4 characters",
    }),
    updated_at: timestamp,
  })),
}).openapi("AdminChannelAccounts");

const Params = TeamParam.extend({ channel: ChannelSchema.openapi({ param: { name: "channel", in: "path" } }) });

/** Named by their channel: the examples test puts each on that channel. */
const EXAMPLES = {
  sms: {
    summary: "Twilio first, Vonage when Twilio certainly did not take the message",
    value: {
      accounts: [
        { provider: "twilio", credentials: { account_sid: `AC${"0".repeat(32)}`, auth_token: "f".repeat(32) } },
        { provider: "vonage", credentials: { api_key: "a1b2c3d4", api_secret: "S3cr3tS3cr3tS3cr" } },
      ],
    },
  },
  email: {
    summary: "Amazon SES (its secret access key stays encrypted)",
    value: {
      accounts: [{
        provider: "ses",
        credentials: {
          region: "eu-west-1",
          access_key_id: "AKIAIOSFODNN7EXAMPLE",
          secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        },
      }],
      failover_on_timeout: false,
    },
  },
};

/** Why an account's addresses may not be reached (the webhook rule: no private targets), else undefined. */
async function addressRefusal(deps: Deps, account: z.infer<typeof AccountBody>): Promise<string | undefined> {
  const options = { allowPrivate: deps.config.WEBHOOK_ALLOW_PRIVATE };
  const urls: [string, string][] = [];
  if ("base_url" in account && account.base_url) urls.push(["base_url", account.base_url]);
  if (account.provider === "smtp") urls.push(["credentials.host", `http://${account.credentials.host}/`]);
  if (account.provider === "fcm" && account.credentials.token_uri) {
    urls.push(["credentials.token_uri", account.credentials.token_uri]);
  }
  for (const [field, url] of urls) {
    const refusal = await urlRefusal(url, options);
    if (refusal) return `${field}: ${refusal.replace(/^url /, "")}`;
  }
  return undefined;
}

/** One account of a PUT body, as validated. */
export type AccountInput = z.infer<typeof AccountBody>;

/**
 * Checks a channel's accounts (each provider carries the channel; no private address unless allowed),
 * then stores them in this order, sealed; what the admin API's PUT and the dashboard both save through.
 * A ValidationError names the account (`accounts.<i>.…`); MissingKeyError without CHANNEL_ACCOUNTS_KEY.
 */
export async function saveChannelAccounts(
  deps: Deps,
  teamId: string,
  channel: Channel,
  accounts: AccountInput[],
  failoverOnTimeout: boolean,
): Promise<ChannelAccountList> {
  for (const [i, account] of accounts.entries()) {
    if (!carries(channel, account.provider)) {
      throw new ValidationError(
        `accounts.${i}.provider: ${account.provider} cannot send ${channel} (${channel} takes: ${
          PROVIDERS_BY_CHANNEL[channel].join(", ")
        })`,
        "provider_not_for_channel",
      );
    }
    const refusal = await addressRefusal(deps, account);
    if (refusal) throw new ValidationError(`accounts.${i}.${refusal}`, "invalid_provider_url");
  }
  if (!deps.config.CHANNEL_ACCOUNTS_KEY) throw new MissingKeyError();
  const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
  const list = await putChannelAccounts(deps.sql, key, { teamId, channel, failoverOnTimeout }, accounts);
  // Which providers, never what credentials.
  log("info", "channel accounts set", {
    team_id: teamId,
    channel,
    providers: list.accounts.map((a) => a.provider),
    failover_on_timeout: list.failover_on_timeout,
  });
  return list;
}

/** A team's own provider accounts per channel: set as a whole, read back masked. */
export function adminChannelAccountRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "put",
      path: "/teams/{team_id}/channel-accounts/{channel}",
      ...ADMIN,
      summary: "Set a team's own provider accounts of a channel",
      description: "Replaces the team's accounts of the channel. A message goes to the first account whose " +
        "circuit is closed, then the next, and last to the service's default provider; it moves on only " +
        "when an account certainly did not take it (docs/channel-accounts.md). Providers: " +
        Object.entries(PROVIDERS_BY_CHANNEL).map(([c, p]) => `${c}: ${p.join(", ")}`).join("; ") +
        ". Credentials are encrypted at rest (CHANNEL_ACCOUNTS_KEY; 503 `channel_accounts_key_missing` " +
        "without it) and never shown again.",
      request: { params: Params, body: jsonBody(ChannelAccountsBody, EXAMPLES) },
      responses: {
        200: jsonResponse(ChannelAccountsSchema, "The accounts now in force, secrets masked"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
        503: { ...NotFound, description: "CHANNEL_ACCOUNTS_KEY is not set" },
      },
    }),
    async (c) => {
      const { team_id, channel } = c.req.valid("param");
      const team = await requireTeam(deps.sql, team_id);
      const body = c.req.valid("json");
      const list = await saveChannelAccounts(deps, team.id, channel, body.accounts, body.failover_on_timeout ?? false);
      return c.json(list, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/teams/{team_id}/channel-accounts/{channel}",
      ...ADMIN,
      summary: "A team's own provider accounts of a channel, secrets masked",
      description: "The accounts in the order they are tried; each secret is shown as `****` (with its last " +
        "four characters when it is long). An empty list: the service's default provider only.",
      request: { params: Params },
      responses: {
        200: jsonResponse(ChannelAccountsSchema, "The accounts, secrets masked"),
        401: Unauthorized,
        404: NotFound,
      },
    }),
    async (c) => {
      const { team_id, channel } = c.req.valid("param");
      const team = await requireTeam(deps.sql, team_id);
      return c.json(await listChannelAccounts(deps.sql, team.id, channel), 200);
    },
  );

  return app;
}
