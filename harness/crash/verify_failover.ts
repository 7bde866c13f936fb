/**
 * The crash test's checks of the failover send (failover.ts): no number accepted by both accounts'
 * fakes nor twice by one; every SMS recorded sent names the account whose fake accepted it, with that
 * fake's sid, and lists its attempts ending in that hand-over; every one recorded failed was left in
 * an account's hands by a killed pass and accepted by neither; exact counters and wallet.
 */
import type { Db } from "../../shared/db.ts";
import type { Attempt } from "../../shared/providers/failover.ts";
import { type AccountReceipts, failoverContactOf, type FailoverScenario } from "./failover.ts";
import type { Api } from "./scenario.ts";
import { checkWallet, MAY_HAVE_SENT, sample, SMS_MICROS } from "./verify.ts";

interface TriggerAnswer {
  status: string;
  summary: { total_contacts: number; sent: number; failed: number; filtered: number };
}

/** The eligible numbers (active contacts) of the failover send, and those the first account refuses. */
function eligibleOf(f: FailoverScenario) {
  const eligible = new Set<string>();
  const refused = new Set<string>();
  for (let i = 0; i < f.contacts; i++) {
    const c = failoverContactOf(i, f.inactiveEvery);
    if (!c.active) continue;
    eligible.add(c.phone);
    if (c.refusedByFirst) refused.add(c.phone);
  }
  return { eligible, refused };
}

/** The failover send's trigger and its team's wallet through the API (the service running). */
export async function checkFailoverThroughApi(api: Api, f: FailoverScenario): Promise<string[]> {
  const problems: string[] = [];
  const { eligible } = eligibleOf(f);
  const t = await api.call<TriggerAnswer>("GET", `/api/v1/triggers/${f.trigger}`, { key: f.apiKey });
  const got = t.summary;
  if (t.status !== "completed") problems.push(`failover sms send ${f.trigger}: status ${t.status}, expected completed`);
  const filtered = f.contacts - eligible.size;
  if (got.total_contacts !== f.contacts || got.sent + got.failed !== eligible.size || got.filtered !== filtered) {
    problems.push(
      `failover sms send ${f.trigger}: summary ${JSON.stringify(got)}, expected ` +
        JSON.stringify({ total_contacts: f.contacts, "sent + failed": eligible.size, filtered }),
    );
  }
  const wallet = await api.call<{ balance: number }>("GET", `/admin/v1/teams/${f.teamId}/wallet`);
  const expected = (f.topUpMicros - SMS_MICROS * got.sent) / 1_000_000;
  if (Math.abs(wallet.balance - expected) > 1e-9) {
    problems.push(`failover team: wallet balance ${wallet.balance} USD, expected ${expected} (one SMS per SMS sent)`);
  }
  return problems;
}

interface Row {
  to_address: string;
  status: string;
  error: string | null;
  sid: string | null;
  handed_account: string | null;
  attempts: Attempt[] | null;
}

/** The stored messages and wallet of the failover team against what the two fakes accepted. */
export async function checkFailoverStored(
  db: Db,
  f: FailoverScenario,
  [first, second]: [AccountReceipts, AccountReceipts],
): Promise<string[]> {
  const problems: string[] = [];
  const { eligible, refused } = eligibleOf(f);
  const rows = await db<Row[]>`
    select to_address, status, error, provider_message_id as sid, handed_account, attempts from messages
    where trigger_id = ${f.trigger} and status <> 'filtered'`;
  const byAccount = new Map([[f.accounts[0], first], [f.accounts[1], second]]);
  const both = [...first.accepted.keys()].filter((to) => second.accepted.has(to));
  const twice = [first, second].flatMap((r, n) =>
    [...r.accepted].filter(([, sids]) => sids.length > 1).map(([to, sids]) =>
      `${to} ×${sids.length} (account ${n + 1})`
    )
  );
  const stranger = [first, second].flatMap((r) => [...r.accepted.keys()]).filter((to) => !eligible.has(to));
  const refusedAccepted = [...first.accepted.keys()].filter((to) => refused.has(to));
  const sent = rows.filter((r) => r.status === "sent");
  const failed = rows.filter((r) => r.status === "failed");
  const other = rows.filter((r) => r.status !== "sent" && r.status !== "failed");
  // Sent: the account it names accepted that number, with the sid recorded, and its last attempt says so.
  const wrongAccount: string[] = [];
  const wrongAttempts: string[] = [];
  for (const r of sent) {
    const sids = byAccount.get(r.handed_account ?? "")?.accepted.get(r.to_address) ?? [];
    if (!sids.includes(r.sid ?? "")) {
      wrongAccount.push(`${r.to_address}: ${r.sid} by ${r.handed_account}`);
      continue;
    }
    const last = r.attempts?.at(-1);
    const sentElsewhere = r.attempts?.some((a) => a.outcome === "sent" && a.account !== r.handed_account);
    if (
      last?.outcome !== "sent" || last.account !== r.handed_account || last.provider_message_id !== r.sid ||
      sentElsewhere
    ) {
      wrongAttempts.push(`${r.to_address}: ${JSON.stringify(r.attempts)}`);
    }
  }
  const acceptedButFailed = failed.filter((r) => first.accepted.has(r.to_address) || second.accepted.has(r.to_address))
    .map((r) => r.to_address);
  const wrongReason = failed.filter((r) => r.error !== MAY_HAVE_SENT).map((r) => `${r.to_address}: ${r.error}`);
  if (both.length > 0) problems.push(`${both.length} numbers got an SMS through both accounts: ${sample(both)}`);
  if (twice.length > 0) problems.push(`${twice.length} numbers got two SMS through one account: ${sample(twice)}`);
  if (stranger.length > 0) problems.push(`${stranger.length} failover SMS to numbers outside the send`);
  if (refusedAccepted.length > 0) {
    problems.push(
      `the first account accepted ${refusedAccepted.length} numbers it refuses: ${sample(refusedAccepted)}`,
    );
  }
  if (wrongAccount.length > 0) {
    problems.push(
      `${wrongAccount.length} failover SMS recorded sent not as an account accepted them: ${sample(wrongAccount)}`,
    );
  }
  if (wrongAttempts.length > 0) {
    problems.push(
      `${wrongAttempts.length} failover SMS sent whose attempts do not end in it: ${sample(wrongAttempts)}`,
    );
  }
  if (wrongReason.length > 0) problems.push(`${wrongReason.length} failover SMS failed: ${sample(wrongReason)}`);
  if (acceptedButFailed.length > 0) {
    problems.push(
      `${acceptedButFailed.length} failover SMS an account accepted were recorded failed: ${sample(acceptedButFailed)}`,
    );
  }
  if (other.length > 0) problems.push(`${other.length} failover SMS ${other[0].status}, expected sent or failed`);
  if (sent.length + failed.length !== eligible.size) {
    problems.push(`${sent.length} failover SMS sent and ${failed.length} failed, expected ${eligible.size} in all`);
  }
  problems.push(...await checkWallet(db, f.teamId, f.topUpMicros - SMS_MICROS * sent.length, "failover team's wallet"));
  const bySecond = sent.filter((r) => r.handed_account === f.accounts[1]);
  const afterRefusal = bySecond.filter((r) =>
    r.attempts?.some((a) => a.account === f.accounts[0] && a.outcome === "temporary")
  );
  const afterSkip = bySecond.filter((r) =>
    r.attempts?.some((a) => a.account === f.accounts[0] && a.outcome === "skipped")
  );
  const reached = failed.filter((r) => first.received.has(r.to_address) || second.received.has(r.to_address)).length;
  console.log(
    `SMS through failover: ${sent.length} sent, ${sent.length - bySecond.length} by the first account and ` +
      `${bySecond.length} by the second (${afterRefusal.length} after its 503, ${afterSkip.length} with its circuit open); ` +
      `${failed.length} failed as possibly sent by a killed pass (${reached} had reached a fake, ` +
      `${acceptedButFailed.length} accepted); ${both.length} numbers through both; ` +
      `the fakes' logs read ${first.lookups} and ${second.lookups} times`,
  );
  return problems;
}
