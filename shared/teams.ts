import { createApiKey } from "./api_keys.ts";
import type { Config } from "./config.ts";
import type { Sql } from "./db.ts";
import type { Team } from "./deps.ts";

/** The keys handed out when a team is created. */
export interface TeamKeys {
  live: string;
  test: string;
  publishable: string;
}

/**
 * Creates a team with its wallet, one key of each kind, and a default sender identity per
 * channel from the service defaults, so that it can send at once.
 */
export async function createTeam(
  db: Sql,
  config: Config,
  input: { name: string; plan?: Team["plan"] },
): Promise<{ team: Team; keys: TeamKeys }> {
  return await db.begin(async (tx) => {
    const [team]: [Team] = await tx`
      insert into teams ${tx({ name: input.name, plan: input.plan ?? "pro" })}
      returning id, name, plan`;
    await tx`insert into wallets ${tx({ team_id: team.id })}`;
    const identities = [
      { channel: "email", from_address: config.EMAIL_FROM, name: config.EMAIL_FROM_NAME },
      { channel: "sms", from_address: config.SMS_FROM, name: null },
      { channel: "whatsapp", from_address: config.WHATSAPP_FROM, name: null },
      { channel: "push", from_address: config.PUSH_APP, name: null },
    ].map((i) => ({ ...i, team_id: team.id, id: crypto.randomUUID(), is_default: true }));
    await tx`insert into sender_identities ${
      tx(identities, "team_id", "channel", "id", "from_address", "name", "is_default")
    }`;
    const keys: TeamKeys = {
      live: await createApiKey(tx, team.id, "sk_live"),
      test: await createApiKey(tx, team.id, "sk_test"),
      publishable: await createApiKey(tx, team.id, "pk_live"),
    };
    return { team, keys };
  });
}

/** The team's contact-token secret, or null when its publishable keys need no contact token. */
export async function contactTokenSecret(db: Sql, teamId: string): Promise<string | null> {
  const [row]: [{ contact_token_secret: string | null }?] =
    await db`select contact_token_secret from teams where id = ${teamId}`;
  return row?.contact_token_secret ?? null;
}

/** Sets (a new secret) or clears (null) the team's contact-token secret. */
export async function setContactTokenSecret(db: Sql, teamId: string, secret: string | null): Promise<void> {
  await db`update teams set contact_token_secret = ${secret} where id = ${teamId}`;
}
