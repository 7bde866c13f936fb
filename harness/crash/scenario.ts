/** The crash test's data and sends, set up through the public and admin APIs of a running service. */
import type { FailoverScenario } from "./failover.ts";

/** Sizes of the scenario. */
export interface ScenarioSize {
  /** Contacts carrying the bulk tag (all of them). */
  contacts: number;
  /** The first `workflow` contacts also carry the workflow tag and a phone (the SMS send goes to them too). */
  workflow: number;
  /** Every `inactiveEvery`-th contact is inactive: resolved by the sends but filtered. */
  inactiveEvery: number;
  /** Contacts of the failover team, each with a phone (its SMS send goes to them all: failover.ts). */
  failover: number;
}

/** What the scenario created and fired. */
export interface Scenario {
  teamId: string;
  apiKey: string;
  workflowId: string;
  /** The three sends: email to the bulk tag, the two-step workflow and the SMS to the workflow tag. */
  triggers: { email: string; workflow: string; sms: string };
  /**
   * A burst of direct emails fired with them (to directAddress(i)): the service runs with a low
   * SEND_DEFER_RATE, so they are accepted into the burst spool and drained from it (spool.ts).
   */
  direct: string[];
  /** The second team's SMS send through two accounts of its own (failover.ts). */
  failover: FailoverScenario;
  topUpMicros: number;
  size: ScenarioSize;
}

/** Tags and template keys (fixed: the checks look them up by these). */
export const NAMES = {
  bulkTag: "crash_all",
  workflowTag: "crash_wf",
  bulkTemplate: "crash_bulk",
  step1Template: "crash_step1",
  step2Template: "crash_step2",
  smsTemplate: "crash_sms",
  bulkSubject: "Bulk news",
  step1Subject: "Step one",
  step2Subject: "Step two",
} as const;

/** The contact of index `i`: address, phone and whether it is active. */
export function contactOf(i: number, size: ScenarioSize) {
  return {
    email: `crash.${String(i).padStart(6, "0")}@example.com`,
    phone: `+44770${String(900000 + i).padStart(7, "0")}`,
    active: i % size.inactiveEvery !== 0,
    inWorkflow: i < size.workflow,
  };
}

/** A small client of the service's HTTP API that fails loudly on an unexpected status. */
export class Api {
  constructor(readonly baseUrl: string, readonly adminToken: string) {}

  async call<T = Record<string, unknown>>(
    method: string,
    path: string,
    options: { body?: unknown; key?: string; expect?: number[] } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (options.key) headers["X-API-Key"] = options.key;
    else headers["Authorization"] = `Bearer ${this.adminToken}`;
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    const expect = options.expect ?? [200, 201];
    if (!expect.includes(res.status)) {
      throw new Error(`${method} ${path} answered ${res.status} (expected ${expect.join("/")}): ${text.slice(0, 500)}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  }
}

/** Creates the team, wallet, templates, contacts and workflow (nothing is sent yet). */
export async function setUp(api: Api, size: ScenarioSize, topUpUsd: number) {
  const { team, keys } = await api.call<{ team: { id: string }; keys: { live: string } }>("POST", "/admin/v1/teams", {
    body: { name: "crash-test", plan: "enterprise" },
  });
  await api.call("POST", `/admin/v1/teams/${team.id}/wallet/topup`, { body: { amount: topUpUsd } });
  const templates: [string, string, unknown][] = [
    ["email", NAMES.bulkTemplate, { subject: NAMES.bulkSubject, html: "<p>Hello {{contact_first_name}}</p>" }],
    ["email", NAMES.step1Template, { subject: NAMES.step1Subject, html: "<p>One {{contact_first_name}}</p>" }],
    ["email", NAMES.step2Template, { subject: NAMES.step2Subject, html: "<p>Two {{contact_first_name}}</p>" }],
    ["sms", NAMES.smsTemplate, { body: "Hi {{contact_first_name}}, short news" }],
  ];
  for (const [channel, key, body] of templates) {
    await api.call("PUT", `/admin/v1/teams/${team.id}/templates/${channel}/${key}`, { body });
  }
  const key = keys.live;
  for (let start = 0; start < size.contacts; start += 1_000) {
    const contacts = [];
    for (let i = start; i < Math.min(size.contacts, start + 1_000); i++) {
      const c = contactOf(i, size);
      contacts.push({
        email: c.email,
        external_id: `crash-${i}`,
        first_name: `Name${i}`,
        tags: c.inWorkflow ? [NAMES.bulkTag, NAMES.workflowTag] : [NAMES.bulkTag],
        is_active: c.active,
        custom_fields: c.inWorkflow ? { phone: c.phone } : {},
      });
    }
    const answer = await api.call<{ summary: { created_count: number } }>("POST", "/api/v1/contacts/bulk", {
      key,
      body: { contacts },
    });
    if (answer.summary.created_count !== contacts.length) {
      throw new Error(`Bulk create made ${answer.summary.created_count} of ${contacts.length} contacts`);
    }
  }
  const workflow = await api.call<{ id: string }>("POST", "/api/v1/workflows", {
    key,
    body: {
      name: "crash-two-steps",
      event_type: "crash_event",
      steps: [
        {
          step_order: 1,
          channel_type: "email",
          step_name: "first",
          configuration: { template_id: NAMES.step1Template, delay_minutes: 0 },
        },
        {
          step_order: 2,
          channel_type: "email",
          step_name: "second",
          configuration: { template_id: NAMES.step2Template, delay_minutes: 0.001 },
        },
      ],
    },
  });
  return { teamId: team.id, apiKey: key, workflowId: workflow.id };
}

/** Direct emails in the scenario's burst. */
export const DIRECT_SENDS = 100;

/** The address of the i-th direct email. */
export function directAddress(i: number): string {
  return `direct-${i}@example.com`;
}

/** Fires the three sends and the burst of direct emails at once; answers their trigger ids. */
export async function fire(
  api: Api,
  key: string,
  workflowId: string,
): Promise<Pick<Scenario, "triggers" | "direct">> {
  type Accepted = { trigger_id: string };
  const direct = Promise.all(
    Array.from({ length: DIRECT_SENDS }, (_, i) =>
      api.call<Accepted>("POST", "/api/v1/messages/send", {
        key,
        body: { recipient_type: "direct_email", direct_email: directAddress(i), template_key: NAMES.bulkTemplate },
      })),
  );
  const [email, workflow, sms] = await Promise.all([
    api.call<Accepted>("POST", "/api/v1/messages/send", {
      key,
      body: { recipient_type: "tag", tag: [NAMES.bulkTag], template_key: NAMES.bulkTemplate },
    }),
    api.call<Accepted>("POST", "/api/v1/workflows/trigger", {
      key,
      body: { workflow_id: workflowId, recipient_type: "tag", tags: [NAMES.workflowTag] },
    }),
    api.call<Accepted>("POST", "/api/v1/sms/send", {
      key,
      body: { recipient_type: "tag", tag: [NAMES.workflowTag], template_key: NAMES.smsTemplate },
    }),
  ]);
  return {
    triggers: { email: email.trigger_id, workflow: workflow.trigger_id, sms: sms.trigger_id },
    direct: (await direct).map((a) => a.trigger_id),
  };
}
