import { Hono } from "hono";
import { walletCurrency } from "../admin/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { toUsd } from "../../shared/money.ts";
import { balanceMicros, ledger, type LedgerEntry } from "../../shared/wallet.ts";
import type { DashboardEnv } from "./env.ts";
import { BASE, Page, When } from "./layout.tsx";
import { Table } from "./table.tsx";
import { Pager } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";

/** A ledger id from the query string: a positive integer, or undefined (the first page). */
function ledgerCursor(value: string | undefined): number | undefined {
  return value && /^\d{1,18}$/.test(value) ? Number(value) : undefined;
}

/** Ledger entries on one page. */
const PAGE_SIZE = 50;

const KIND_LABELS: Record<LedgerEntry["kind"], string> = { topup: "Top-up", charge: "Charge", refund: "Refund" };

/** An amount as the wallet shows it: two decimals, more only when the micro-dollars need them. */
export function formatMoney(amount: number, currency: string): string {
  const digits = Math.max(2, Math.min(6, (String(Math.abs(amount)).split(".")[1] ?? "").length));
  return `${amount < 0 ? "−" : ""}${Math.abs(amount).toFixed(digits)} ${currency}`;
}

function LedgerTable(props: { entries: LedgerEntry[]; currency: string }) {
  return (
    <Table caption="Ledger" headings={["When", "Kind", "Amount", "Balance after", "What for"]}>
      {props.entries.map((e) => (
        <tr key={e.id}>
          <td data-label="When">
            <When at={e.created_at} />
          </td>
          <td data-label="Kind">{KIND_LABELS[e.kind]}</td>
          <td data-label="Amount" class="number">{formatMoney(e.amount, props.currency)}</td>
          <td data-label="Balance after" class="number">{formatMoney(e.balance_after, props.currency)}</td>
          <td data-label="What for">
            {e.description}
            {e.reference && <code class="muted">{` ${e.reference}`}</code>}
          </td>
        </tr>
      ))}
    </Table>
  );
}

/** How a team gets money in: the operator tops up through the admin API, never the dashboard. */
function TopUpHelp(props: { user: SessionUser }) {
  return (
    <p class="muted">
      Top-ups are made by the operator of this service: ask them to call{" "}
      <code>POST /admin/v1/teams/{props.user.teamId}/wallet/topup</code> with <code>{'{"amount": 50}'}</code>{" "}
      (USD). SMS, WhatsApp and OTP sends of live keys are charged from this balance; a send it cannot pay is refused.
    </p>
  );
}

function WalletPage(
  props: {
    user: SessionUser;
    balance: number;
    currency: string;
    entries: LedgerEntry[];
    next?: string;
    after?: string;
  },
) {
  const { user, entries } = props;
  return (
    <Page title="Wallet" user={user} active="wallet">
      <h1>Wallet</h1>
      <section class="card" aria-labelledby="balance-title">
        <h2 id="balance-title">Balance</h2>
        <p class="big" id="balance">{formatMoney(props.balance, props.currency)}</p>
        <TopUpHelp user={user} />
      </section>
      <section class="card" aria-labelledby="ledger-title">
        <h2 id="ledger-title">Ledger</h2>
        {entries.length > 0
          ? (
            <>
              <LedgerTable entries={entries} currency={props.currency} />
              <Pager path={`${BASE}/wallet`} query={{}} after={props.after} next={props.next ?? null} />
            </>
          )
          : (
            <div class="empty">
              <p>
                <strong>{props.after ? "No older entries." : "Nothing in the ledger yet."}</strong>
              </p>
              <p>Ask the operator for a first top-up: live SMS, WhatsApp and OTP sends need a balance.</p>
            </div>
          )}
      </section>
    </Page>
  );
}

/** The wallet page: the balance and the ledger, newest first in keyset pages; every member can see it. */
export function walletRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.get("/wallet", async (c) => {
    const user = c.get("user");
    const before = ledgerCursor(c.req.query("after"));
    const [balance, currency, rows] = await Promise.all([
      balanceMicros(deps.sql, user.teamId),
      walletCurrency(deps.sql, user.teamId),
      ledger(deps.sql, user.teamId, PAGE_SIZE + 1, before),
    ]);
    const entries = rows.slice(0, PAGE_SIZE);
    const next = rows.length > PAGE_SIZE ? String(entries.at(-1)!.id) : undefined;
    return c.html(
      <WalletPage
        user={user}
        balance={toUsd(balance)}
        currency={currency}
        entries={entries}
        next={next}
        after={before === undefined ? undefined : String(before)}
      />,
    );
  });

  return app;
}
