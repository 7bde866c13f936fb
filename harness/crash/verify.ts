/**
 * The crash test's end checks: exactly one message per send, step and recipient (the SMS through the
 * fake Twilio at most one, and failed with the reason only when a kill left it possibly sent and
 * Twilio does not have it); exact
 * counters; an exact wallet.
 */
import type { Db } from "../../shared/db.ts";
import { type Api, contactOf, directAddress, NAMES, type Scenario } from "./scenario.ts";

/** Price of one single-segment SMS (PRICE_SMS_SEGMENT, the default), in micro-dollars. */
export const SMS_MICROS = 7_500;

/** Why an SMS that a killed pass handed to Twilio is failed rather than sent again (worker/handoff.ts). */
export const MAY_HAVE_SENT =
  "Cannot send sms: the service stopped while twilio was sending it, so it may have been sent; " +
  "it is not tried again (a second try could send it twice)";

/** The first few of a list of problems, for a message. */
export function sample(list: string[]): string {
  return list.slice(0, 5).join(", ") + (list.length > 5 ? ", …" : "");
}

/** What the fake Twilio saw, by phone number: how many create requests, and the sid of each message it created. */
export interface TwilioReceipts {
  received: Map<string, number>;
  accepted: Map<string, string>;
  /** Reads of its Messages list (a killed pass's SMS looked up). */
  lookups: number;
}

interface TriggerAnswer {
  status: string;
  summary: { total_contacts: number; sent: number; failed: number; filtered: number };
}

/** What each send must end with. */
function expectations(s: Scenario) {
  let active = 0;
  let activeWf = 0;
  const wf = s.size.workflow;
  for (let i = 0; i < s.size.contacts; i++) {
    const c = contactOf(i, s.size);
    if (c.active) active++;
    if (c.active && c.inWorkflow) activeWf++;
  }
  const n = s.size.contacts;
  return {
    active,
    activeWf,
    triggers: {
      [s.triggers.email]: { name: "email tag send", total: n, sent: active, failed: 0, filtered: n - active },
      // A workflow trigger counts its steps' messages: two per contact.
      [s.triggers.workflow]: {
        name: "workflow trigger",
        total: 2 * wf,
        sent: 2 * activeWf,
        failed: 0,
        filtered: 2 * (wf - activeWf),
      },
      // An SMS a kill left in Twilio's hands, and that Twilio does not have, fails with the reason: sent + failed.
      [s.triggers.sms]: {
        name: "sms tag send",
        total: wf,
        sent: activeWf,
        failed: 0,
        filtered: wf - activeWf,
        mayFail: true,
      },
      ...Object.fromEntries(
        s.direct.map((id, i) => [id, { name: `direct email ${i}`, total: 1, sent: 1, failed: 0, filtered: 0 }]),
      ),
    },
  };
}

/** True when every trigger of the scenario is final (completed or failed). */
export async function allFinal(api: Api, s: Scenario): Promise<boolean> {
  const ids: [string, string][] = [...Object.values(s.triggers), ...s.direct].map((id) => [id, s.apiKey]);
  for (const [id, key] of [...ids, [s.failover.trigger, s.failover.apiKey]]) {
    const t = await api.call<TriggerAnswer>("GET", `/api/v1/triggers/${id}`, { key });
    if (t.status !== "completed" && t.status !== "failed") return false;
  }
  return true;
}

/** Checks the triggers' status and counters and the wallet through the API (the service running). */
export async function checkThroughApi(api: Api, s: Scenario): Promise<string[]> {
  const problems: string[] = [];
  const expected = expectations(s);
  let smsSent = 0;
  for (const [id, want] of Object.entries(expected.triggers)) {
    const t = await api.call<TriggerAnswer>("GET", `/api/v1/triggers/${id}`, { key: s.apiKey });
    const got = t.summary;
    if (t.status !== "completed") problems.push(`${want.name} ${id}: status ${t.status}, expected completed`);
    if ("mayFail" in want) {
      smsSent = got.sent;
      if (got.total_contacts !== want.total || got.sent + got.failed !== want.sent || got.filtered !== want.filtered) {
        problems.push(
          `${want.name} ${id}: summary ${JSON.stringify(got)}, expected ` +
            JSON.stringify({ total_contacts: want.total, "sent + failed": want.sent, filtered: want.filtered }),
        );
      }
      continue;
    }
    if (
      got.total_contacts !== want.total || got.sent !== want.sent || got.failed !== want.failed ||
      got.filtered !== want.filtered
    ) {
      problems.push(
        `${want.name} ${id}: summary ${JSON.stringify(got)}, expected ` +
          JSON.stringify({ total_contacts: want.total, sent: want.sent, failed: want.failed, filtered: want.filtered }),
      );
    }
  }
  const wallet = await api.call<{ balance: number }>("GET", `/admin/v1/teams/${s.teamId}/wallet`);
  const expectedBalance = (s.topUpMicros - SMS_MICROS * smsSent) / 1_000_000;
  if (Math.abs(wallet.balance - expectedBalance) > 1e-9) {
    problems.push(`wallet balance ${wallet.balance} USD, expected ${expectedBalance} (top-up − one SMS per SMS sent)`);
  }
  return problems;
}

/** Checks the stored data (the service stopped, or on a server): outbox, Twilio, messages, executions, ledger. */
export async function checkStoredData(db: Db, s: Scenario, twilio: TwilioReceipts): Promise<string[]> {
  const problems: string[] = [];
  problems.push(...await checkOutbox(db, s));
  const sms = await checkTwilio(db, s, twilio);
  problems.push(...sms.problems);
  const [pending]: [{ n: number }] = await db`
    select count(*)::int as n from messages where team_id = ${s.teamId} and status = 'pending'`;
  if (pending.n > 0) problems.push(`${pending.n} messages still pending`);
  // The outbox's two halves (migration 011) are read apart: a correlated look-up into the view over
  // both made PGlite, which keeps no statistics, plan these as a scan of the view a message.
  const [orphans]: [{ unrecorded: number; unsent: number }] = await db`
    select
      (select count(*)::int from outbox o where o.team_id = ${s.teamId}
        and not exists (select 1 from messages m where m.id = o.id)) as unrecorded,
      (select count(*)::int from messages m where m.team_id = ${s.teamId} and m.status = 'sent' and m.provider = 'outbox'
        and not m.in_outbox and not exists (select 1 from outbox o where o.id = m.id)) as unsent`;
  if (orphans.unrecorded > 0) problems.push(`${orphans.unrecorded} outbox rows have no message record`);
  if (orphans.unsent > 0) problems.push(`${orphans.unsent} messages recorded as sent have no outbox row`);
  const executions = await db<{ status: string; current_step: number | null; steps: number }[]>`
    select e.status, e.current_step, (select count(*)::int from workflow_step_runs r where r.execution_id = e.id) as steps
    from workflow_executions e where e.trigger_id = ${s.triggers.workflow}`;
  if (executions.length !== s.size.workflow) {
    problems.push(`workflow: ${executions.length} executions, expected ${s.size.workflow}`);
  }
  const unfinished = executions.filter((e) => e.status !== "COMPLETED" || e.current_step !== null);
  if (unfinished.length > 0) {
    problems.push(
      `workflow: ${unfinished.length} executions not completed (e.g. ${unfinished[0].status} at step ${
        unfinished[0].current_step
      })`,
    );
  }
  const wrongSteps = executions.filter((e) => e.steps !== 2);
  if (wrongSteps.length > 0) {
    problems.push(`workflow: ${wrongSteps.length} executions ran ${wrongSteps[0].steps} steps, expected 2`);
  }
  problems.push(...await checkWallet(db, s.teamId, s.topUpMicros - SMS_MICROS * sms.sent, "wallet"));
  return problems;
}

/**
 * A team's wallet from its stored rows: the balance equals its ledger and `want`, and what the ledger
 * charged (less refunds) equals the costs its messages record. Problems are named by `label`.
 */
export async function checkWallet(db: Db, teamId: string, want: number, label: string): Promise<string[]> {
  const [wallet]: [{ balance: number; ledger: number; charged: number; recorded: number } | undefined] = await db`
    select w.balance_micros::bigint as balance,
      (select coalesce(sum(amount_micros), 0)::bigint from wallet_ledger l where l.team_id = w.team_id) as ledger,
      (select coalesce(sum(-amount_micros), 0)::bigint from wallet_ledger l
        where l.team_id = w.team_id and l.kind in ('charge', 'refund')) as charged,
      (select coalesce(sum(cost_micros), 0)::bigint from messages m where m.team_id = w.team_id) as recorded
    from wallets w where w.team_id = ${teamId}`;
  if (!wallet) return [`${label}: none`];
  const problems: string[] = [];
  if (wallet.balance !== wallet.ledger) {
    problems.push(`${label}: balance ${wallet.balance} µ$ but the ledger sums to ${wallet.ledger} µ$`);
  }
  if (wallet.charged !== wallet.recorded) {
    problems.push(`${label}: charged ${wallet.charged} µ$ but messages record costs of ${wallet.recorded} µ$`);
  }
  if (wallet.balance !== want) problems.push(`${label}: balance ${wallet.balance} µ$, expected ${want} µ$`);
  return problems;
}

/**
 * Outbox rows by (trigger, address, subject) against the expected set: exactly one for every
 * eligible recipient of each send and step, none for anyone else.
 */
async function checkOutbox(db: Db, s: Scenario): Promise<string[]> {
  const want = new Map<string, number>();
  const wantKey = (trigger: string, to: string, subject: string | null) => `${trigger}|${to}|${subject ?? ""}`;
  for (let i = 0; i < s.size.contacts; i++) {
    const c = contactOf(i, s.size);
    if (!c.active) continue;
    want.set(wantKey(s.triggers.email, c.email, NAMES.bulkSubject), 1);
    if (!c.inWorkflow) continue;
    want.set(wantKey(s.triggers.workflow, c.email, NAMES.step1Subject), 1);
    want.set(wantKey(s.triggers.workflow, c.email, NAMES.step2Subject), 1);
  }
  s.direct.forEach((id, i) => want.set(wantKey(id, directAddress(i), NAMES.bulkSubject), 1));
  const rows = await db<{ trigger_id: string; to_address: string; subject: string | null; n: number }[]>`
    select trigger_id, to_address, subject, count(*)::int as n from outbox_all where team_id = ${s.teamId}
    group by trigger_id, to_address, subject`;
  const duplicates: string[] = [];
  const unexpected: string[] = [];
  const seen = new Set<string>();
  for (const r of rows) {
    const key = wantKey(r.trigger_id, r.to_address, r.subject);
    seen.add(key);
    if (!want.has(key)) unexpected.push(`${key} ×${r.n}`);
    else if (r.n !== 1) duplicates.push(`${key} ×${r.n}`);
  }
  const missing = [...want.keys()].filter((k) => !seen.has(k));
  const problems: string[] = [];
  if (duplicates.length > 0) problems.push(`${duplicates.length} duplicated deliveries: ${sample(duplicates)}`);
  if (missing.length > 0) problems.push(`${missing.length} lost deliveries: ${sample(missing)}`);
  if (unexpected.length > 0) problems.push(`${unexpected.length} unexpected deliveries: ${sample(unexpected)}`);
  return problems;
}

/**
 * The SMS send against what the fake Twilio received: no number twice, none outside the send; every
 * SMS recorded sent was created by Twilio, with the sid Twilio gave it; every one recorded failed
 * failed because a kill left it in Twilio's hands and Twilio does not have it (an SMS a killed pass
 * handed over is looked up in Twilio's log). Answers the count sent, for the wallet.
 */
async function checkTwilio(db: Db, s: Scenario, { received, accepted, lookups }: TwilioReceipts) {
  const problems: string[] = [];
  const rows = await db<{ to_address: string; status: string; error: string | null; sid: string | null }[]>`
    select to_address, status, error, provider_message_id as sid from messages
    where trigger_id = ${s.triggers.sms} and status <> 'filtered'`;
  const eligible = new Set<string>();
  for (let i = 0; i < s.size.workflow; i++) {
    const c = contactOf(i, s.size);
    if (c.active) eligible.add(c.phone);
  }
  const twice = [...received].filter(([, n]) => n > 1).map(([to, n]) => `${to} ×${n}`);
  const stranger = [...received.keys()].filter((to) => !eligible.has(to));
  const sent = rows.filter((r) => r.status === "sent");
  const failed = rows.filter((r) => r.status === "failed");
  const unsent = sent.filter((r) => received.get(r.to_address) !== 1).map((r) => r.to_address);
  const wrongSid = sent.filter((r) => accepted.has(r.to_address) && accepted.get(r.to_address) !== r.sid)
    .map((r) => `${r.to_address}: ${r.sid}, Twilio's ${accepted.get(r.to_address)}`);
  const acceptedButFailed = failed.filter((r) => accepted.has(r.to_address)).map((r) => r.to_address);
  const wrongReason = failed.filter((r) => r.error !== MAY_HAVE_SENT).map((r) => `${r.to_address}: ${r.error}`);
  if (twice.length > 0) problems.push(`${twice.length} numbers got more than one SMS: ${sample(twice)}`);
  if (stranger.length > 0) problems.push(`${stranger.length} SMS to numbers outside the send: ${sample(stranger)}`);
  if (unsent.length > 0) problems.push(`${unsent.length} SMS recorded sent never reached Twilio: ${sample(unsent)}`);
  if (wrongReason.length > 0) problems.push(`${wrongReason.length} SMS failed: ${sample(wrongReason)}`);
  if (wrongSid.length > 0) problems.push(`${wrongSid.length} SMS recorded with another sid: ${sample(wrongSid)}`);
  if (acceptedButFailed.length > 0) {
    problems.push(`${acceptedButFailed.length} SMS Twilio accepted were recorded failed: ${sample(acceptedButFailed)}`);
  }
  if (sent.length + failed.length !== eligible.size) {
    problems.push(`${sent.length} SMS sent and ${failed.length} failed, expected ${eligible.size} in all`);
  }
  const reached = failed.filter((r) => received.has(r.to_address)).length;
  console.log(
    `SMS through the fake Twilio: ${sent.length} sent, ${failed.length} failed as possibly sent by a killed pass ` +
      `(${reached} of them had reached Twilio, ${acceptedButFailed.length} had been accepted by it), ` +
      `${twice.length} numbers with two; Twilio's log read ${lookups} times`,
  );
  return { problems, sent: sent.length };
}

/** The newest outbox row (delivery is progressing when a newer one appears). */
export async function newestOutbox(api: Api, teamId: string): Promise<{ id: string; created_at: string } | undefined> {
  const answer = await api.call<{ messages: { id: string; created_at: string }[] }>(
    "GET",
    `/admin/v1/outbox?limit=1&team_id=${teamId}`,
  );
  return answer.messages[0];
}

/** Queue jobs the running service has handled since it started, by outcome (from GET /metrics). */
export async function jobsHandled(baseUrl: string): Promise<{ ok: number; error: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const out = { ok: 0, error: 0 };
  for (const m of text.matchAll(/^queue_jobs_total\{([^}]*)\} (\d+)/gm)) {
    if (m[1].includes('type="tick"')) continue;
    if (m[1].includes('outcome="error"')) out.error += Number(m[2]);
    else out.ok += Number(m[2]);
  }
  return out;
}

/** Spool pages the running service holds (the `queue_jobs_deferred` gauge of GET /metrics). */
export async function spooledPages(baseUrl: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return Number(/^queue_jobs_deferred (\d+)/m.exec(text)?.[1] ?? 0);
}
