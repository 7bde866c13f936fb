/**
 * The crash test's failover send: a second team whose SMS go through two Twilio accounts of its own
 * (team channel accounts), each on a fake Twilio of its own in the test's process. The first answers
 * 503 (temporary: it certainly did not take the message) to every third number, so those fail over
 * to the second while the kills land; the checks (verify_failover.ts) hold that no number gets an SMS
 * from both.
 */
import { randomHex, startFakeTwilio, type TwilioErrorBody } from "../fakes/fake_servers.ts";
import type { Api } from "./scenario.ts";
import { delay } from "./service.ts";

/** Tag and template key of the failover team (fixed: the checks look them up by these). */
export const FAILOVER_NAMES = { tag: "crash_fo", template: "crash_fo_sms" } as const;

/** What the first account answers a number it turns away: Twilio's own 503 body. */
const UNAVAILABLE: TwilioErrorBody = { status: 503, code: 20503, message: "Service unavailable" };

/** The failover team's contact of index `i`: phone, whether it is active, and whether the first account refuses it. */
export function failoverContactOf(i: number, inactiveEvery: number) {
  return {
    phone: `+44771${String(900000 + i).padStart(7, "0")}`,
    active: i % inactiveEvery !== 0,
    refusedByFirst: i % 3 === 0,
  };
}

/** What the failover send set up and fired. */
export interface FailoverScenario {
  teamId: string;
  apiKey: string;
  trigger: string;
  /** The ids of the team's two SMS accounts, in priority order. */
  accounts: [string, string];
  contacts: number;
  inactiveEvery: number;
  topUpMicros: number;
}

/** What one fake Twilio saw: create requests by number, and the sids of the messages it created by number. */
export interface AccountReceipts {
  received: Map<string, number>;
  accepted: Map<string, string[]>;
  /** Reads of its Messages list (a killed pass's SMS looked up). */
  lookups: number;
}

/** The two fake Twilios of the failover team's accounts. */
export interface FailoverFakes {
  /** The accounts as the channel-accounts PUT takes them, in priority order. */
  accounts: [unknown, unknown];
  receipts(): [AccountReceipts, AccountReceipts];
  /** Create requests received so far, by both. */
  requests(): number;
  /** When the first and the last create arrived (ms since the epoch; none: [NaN, NaN]). */
  createdBetween(): [number, number];
  close(): Promise<void>;
}

/** Starts the two fakes; each answers after `latencyMs` (a refusal too), and `onSms` is called at each create. */
export function startFailoverFakes(latencyMs: number, inactiveEvery: number, onSms: () => void): FailoverFakes {
  const refused = (to: string) => {
    const i = Number(to.slice(6)) - 900000;
    return failoverContactOf(i, inactiveEvery).refusedByFirst ? UNAVAILABLE : undefined;
  };
  const creates: number[] = [];
  const hold = () => {
    creates.push(Date.now());
    onSms();
    return delay(latencyMs);
  };
  const credentials = [0, 1].map((n) => ({
    accountSid: `AC${randomHex(16)}`,
    authToken: randomHex(16),
    from: `+1500555000${n + 7}`,
  }));
  const servers = [
    startFakeTwilio({ ...credentials[0], hold, failCreate: refused }),
    startFakeTwilio({ ...credentials[1], hold }),
  ];
  const account = (n: number) => ({
    provider: "twilio",
    credentials: {
      account_sid: credentials[n].accountSid,
      auth_token: credentials[n].authToken,
      from: credentials[n].from,
    },
    base_url: servers[n].url,
  });
  const receipts = (n: number): AccountReceipts => {
    const received = new Map<string, number>();
    const server = servers[n];
    for (const r of server.requests.filter((r) => r.method === "POST")) {
      const to = new URLSearchParams(r.body).get("To") ?? "";
      received.set(to, (received.get(to) ?? 0) + 1);
    }
    const accepted = new Map<string, string[]>();
    for (const m of server.messages) accepted.set(m.to, [...accepted.get(m.to) ?? [], m.sid]);
    const lookups = server.requests.filter((r) => r.method === "GET" && r.path.includes("/Messages.json")).length;
    return { received, accepted, lookups };
  };
  return {
    accounts: [account(0), account(1)],
    receipts: () => [receipts(0), receipts(1)],
    createdBetween: () => [creates[0] ?? NaN, creates.at(-1) ?? NaN],
    requests: () => servers.reduce((n, s) => n + s.requests.filter((r) => r.method === "POST").length, 0),
    close: async () => {
      for (const server of servers) await server.close();
    },
  };
}

/** Creates the failover team: its wallet, SMS template, contacts (with phones) and its two SMS accounts. */
export async function setUpFailover(
  api: Api,
  fakes: FailoverFakes,
  size: { contacts: number; inactiveEvery: number },
  topUpUsd: number,
): Promise<Omit<FailoverScenario, "trigger">> {
  const { team, keys } = await api.call<{ team: { id: string }; keys: { live: string } }>("POST", "/admin/v1/teams", {
    body: { name: "crash-failover", plan: "enterprise" },
  });
  await api.call("POST", `/admin/v1/teams/${team.id}/wallet/topup`, { body: { amount: topUpUsd } });
  await api.call("PUT", `/admin/v1/teams/${team.id}/templates/sms/${FAILOVER_NAMES.template}`, {
    body: { body: "Hi {{contact_first_name}}, news by failover" },
  });
  const { accounts } = await api.call<{ accounts: { id: string }[] }>(
    "PUT",
    `/admin/v1/teams/${team.id}/channel-accounts/sms`,
    { body: { accounts: fakes.accounts } },
  );
  for (let start = 0; start < size.contacts; start += 1_000) {
    const contacts = [];
    for (let i = start; i < Math.min(size.contacts, start + 1_000); i++) {
      const c = failoverContactOf(i, size.inactiveEvery);
      contacts.push({
        email: `crash.fo.${String(i).padStart(6, "0")}@example.com`,
        external_id: `crash-fo-${i}`,
        first_name: `Name${i}`,
        tags: [FAILOVER_NAMES.tag],
        is_active: c.active,
        custom_fields: { phone: c.phone },
      });
    }
    const answer = await api.call<{ summary: { created_count: number } }>("POST", "/api/v1/contacts/bulk", {
      key: keys.live,
      body: { contacts },
    });
    if (answer.summary.created_count !== contacts.length) {
      throw new Error(`Bulk create made ${answer.summary.created_count} of ${contacts.length} failover contacts`);
    }
  }
  return {
    teamId: team.id,
    apiKey: keys.live,
    accounts: [accounts[0].id, accounts[1].id],
    contacts: size.contacts,
    inactiveEvery: size.inactiveEvery,
    topUpMicros: topUpUsd * 1_000_000,
  };
}

/** Fires the failover team's SMS send to its tag; answers its trigger id. */
export async function fireFailover(api: Api, apiKey: string): Promise<string> {
  const { trigger_id } = await api.call<{ trigger_id: string }>("POST", "/api/v1/sms/send", {
    key: apiKey,
    body: { recipient_type: "tag", tag: [FAILOVER_NAMES.tag], template_key: FAILOVER_NAMES.template },
  });
  return trigger_id;
}
