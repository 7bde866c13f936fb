import { createRoute, z } from "@hono/zod-openapi";
import { createApiKey, type KeyKind, keyPrefix, revokeKey } from "../../shared/api_keys.ts";
import type { Deps } from "../../shared/deps.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { newRouter } from "../../shared/http/app.ts";
import { toMicros, toUsd } from "../../shared/money.ts";
import { createTeam } from "../../shared/teams.ts";
import { balanceMicros, ledger, topUp } from "../../shared/wallet.ts";
import { listTeams, requireTeam, walletCurrency } from "./queries.ts";
import {
  ADMIN,
  BadRequest,
  Balance,
  CreatedKey,
  CreatedTeam,
  CreateKeyBody,
  CreateTeamBody,
  NotFound,
  RevokedKey,
  TeamList,
  TeamListQuery,
  TeamParam,
  TopUpBody,
  Unauthorized,
  WalletSchema,
} from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";

const KINDS: Record<z.infer<typeof CreateKeyBody>["kind"], KeyKind> = {
  live: "sk_live",
  test: "sk_test",
  publishable: "pk_live",
  // Beyond DESIGN's three kinds: a sandbox key for client-side code under test (DESIGN lists pk_test_).
  publishable_test: "pk_test",
};

/** Teams, their API keys and their wallets. */
export function adminTeamRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/teams",
      ...ADMIN,
      summary: "Create a team with its wallet, default identities and keys",
      description:
        "Creates a team with a default sender identity per channel and answers its first keys (live, test, " +
        "publishable), shown only here.",
      request: { body: jsonBody(CreateTeamBody) },
      responses: {
        201: jsonResponse(CreatedTeam, "The team and its keys (shown only once)"),
        400: BadRequest,
        401: Unauthorized,
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      return c.json(await createTeam(deps.sql, deps.config, body), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/teams",
      ...ADMIN,
      summary: "List teams with their keys' prefixes and kinds (to find a team whose keys were lost)",
      description:
        "Every team, newest first, with each key's prefix, kind, creation and revocation. Keys are kept only as hashes, so a lost key cannot be shown again: issue a new one with POST /admin/v1/teams/{team_id}/keys and revoke the lost one by its prefix.",
      request: { query: TeamListQuery },
      responses: { 200: jsonResponse(TeamList, "A page of teams, oldest first"), 400: BadRequest, 401: Unauthorized },
    }),
    async (c) => {
      const { page, limit } = c.req.valid("query");
      return c.json({ ...await listTeams(deps.sql, page, limit), page, limit } as never, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/teams/{team_id}/keys",
      ...ADMIN,
      summary: "Create an API key for a team",
      description: "A new key of the kind asked (`live`, `test`, `publishable`), shown only in this answer.",
      request: {
        params: TeamParam,
        body: jsonBody(CreateKeyBody),
      },
      responses: {
        201: jsonResponse(CreatedKey, "The key (shown only once)"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
      },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const key = await createApiKey(deps.sql, team.id, KINDS[c.req.valid("json").kind]);
      return c.json({ key, prefix: keyPrefix(key) }, 201);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/keys/{prefix}",
      ...ADMIN,
      summary: "Revoke an API key by its prefix (effective at once)",
      description: "The key stops working at once. The prefix is the one answered when the key was created.",
      request: { params: z.object({ prefix: z.string().min(1).max(200) }) },
      responses: { 200: jsonResponse(RevokedKey, "Revoked"), 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const prefix = c.req.valid("param").prefix;
      if (!await revokeKey(deps.sql, prefix)) throw new NotFoundError("API key not found", "api_key_not_found");
      // Cached look-ups would keep accepting the key for a while.
      deps.keys.clear();
      return c.json({ revoked: true, prefix }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/teams/{team_id}/wallet/topup",
      ...ADMIN,
      summary: "Add money (USD) to a team's wallet",
      description:
        "SMS, WhatsApp and OTP sends of live keys are charged from the wallet; a send it cannot pay is refused." +
        "SMS, WhatsApp and OTP sends of live keys are charged from the wallet; a send it cannot pay is refused.",
      request: {
        params: TeamParam,
        body: jsonBody(TopUpBody),
      },
      responses: { 200: jsonResponse(Balance, "The new balance"), 400: BadRequest, 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const micros = toMicros(c.req.valid("json").amount);
      const balance = micros > 0 ? await topUp(deps.sql, team.id, micros) : await balanceMicros(deps.sql, team.id);
      return c.json({ balance: toUsd(balance) }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/teams/{team_id}/wallet",
      ...ADMIN,
      summary: "A team's balance and latest wallet transactions",
      description: "The balance in USD and the latest charges, refunds and top-ups.",
      request: {
        params: TeamParam,
        query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(50) }),
      },
      responses: { 200: jsonResponse(WalletSchema, "The wallet"), 400: BadRequest, 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const [balance, currency, transactions] = await Promise.all([
        balanceMicros(deps.sql, team.id),
        walletCurrency(deps.sql, team.id),
        ledger(deps.sql, team.id, c.req.valid("query").limit),
      ]);
      return c.json({ balance: toUsd(balance), currency, transactions }, 200);
    },
  );

  return app;
}
