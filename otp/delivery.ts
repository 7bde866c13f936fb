import type { Db } from "../shared/db.ts";
import type { Deps } from "../shared/deps.ts";
import { PaymentError } from "../shared/errors.ts";
import { log } from "../shared/log.ts";
import { sendingService } from "../shared/sending/accept.ts";
import { newUlid } from "../shared/sending/ids.ts";
import { toUsd } from "../shared/money.ts";
import { balanceMicros, charge, refund } from "../shared/wallet.ts";
import type { OtpChannel } from "./codes.ts";
import { outboxForWantOfProvider } from "../shared/providers/registry.ts";
import { holdersAmong, NO_HOLDERS } from "../shared/channel_accounts.ts";
import { failoverAccounts } from "../shared/providers/account_providers.ts";
import { CircuitBreakers } from "../shared/providers/circuit_breaker.ts";
import { sendWithFailover } from "../shared/providers/failover.ts";
import type { OutboundMessage } from "../shared/providers/types.ts";
import { deliveryCost } from "./pricing.ts";
import { closeOtpConversations, openOtpConversation } from "./conversations.ts";
import { conversationCharge } from "../shared/sending/conversations.ts";
import { builtIn, type OtpTemplate, type RenderedOtp, renderOtp, resolveOtpTemplate } from "./templates.ts";

/** One OTP message about to be sent: where, how worded, and what it costs. */
export interface PlannedMessage {
  /** The message id, known before the charge: a WhatsApp conversation names the message that opened it. */
  id: string;
  channel: OtpChannel;
  to: string;
  template: OtpTemplate;
  message: RenderedOtp;
  /** Micro-dollars. */
  cost: number;
  /** The team has channel accounts of its own for the channel: a live message goes through them. */
  ownAccounts: boolean;
}

/** The circuit of each team account this process sends OTP messages through. */
const breakers = new CircuitBreakers();

/** What a session's messages are made of. */
export interface MessageInput {
  channels: OtpChannel[];
  recipients: Partial<Record<OtpChannel, string>>;
  codes: Partial<Record<OtpChannel, string>>;
  expiry_minutes: number;
  first_name: string | null;
  last_name: string | null;
}

/** The outcome of one channel of a send, as the answer reports it. */
export interface ChannelResult {
  success: boolean;
  message_id: string;
  trigger_id: string;
  execution_id: string;
  used_custom_template: boolean;
}

/**
 * Chooses the template of each channel and renders its message with the code. `live`: the messages
 * will really be sent (neither a test key's nor a sandbox_mode session's).
 */
export async function planMessages(
  deps: Deps,
  teamId: string,
  input: MessageInput,
  { live }: { live: boolean },
): Promise<PlannedMessage[]> {
  // A team's accounts come first on any channel, as for its other live messages (worker/failover_send.ts):
  // asked once per live request, and not at all without CHANNEL_ACCOUNTS_KEY.
  const holders = live ? await holdersAmong(deps, [teamId]) : NO_HOLDERS;
  return await Promise.all(input.channels.map(async (channel) => {
    const to = input.recipients[channel]!;
    const variables = {
      otp_code: input.codes[channel]!,
      expiry_minutes: input.expiry_minutes,
      first_name: input.first_name,
      last_name: input.last_name,
    };
    let template = await resolveOtpTemplate(sendingService(deps).lookups, deps.config, teamId, channel, to);
    let message = renderOtp(template, variables);
    if (!message) {
      // A custom template too large once filled: the built-in one, as for any unusable custom template.
      template = builtIn(template);
      message = renderOtp(template, variables)!;
    }
    const ownAccounts = holders.has(teamId, channel);
    // Kept in the outbox for want of a provider: the delivery is free (the verification fee is not).
    const outboxed = outboxForWantOfProvider(deps, channel, false) && !ownAccounts;
    const cost = outboxed ? 0 : deliveryCost(deps.config, channel, message.text);
    return { id: newUlid(), channel, to, template, message, cost, ownAccounts };
  }));
}

function insufficient(required: number, available: number): PaymentError {
  return new PaymentError(
    `Insufficient wallet balance. Required: ${toUsd(required)}, Available: ${toUsd(available)}`,
    { details: { required: toUsd(required), available: toUsd(available) } },
  );
}

/** What one OTP request pays up front: the fee, and the messages on a built-in template. */
export interface UpFrontBill {
  teamId: string;
  plans: PlannedMessage[];
  fee: number;
  /** The wallet reference of the charge and of its refund. */
  reference: string;
}

function upFrontCost({ plans, fee }: UpFrontBill): number {
  return fee + plans.filter((p) => !p.template.custom).reduce((sum, p) => sum + p.cost, 0);
}

/**
 * Charges what is paid up front (the fee, and the delivery of messages on a built-in template)
 * after checking that the wallet also covers the custom-template messages charged at send time.
 * 402 when it cannot pay everything.
 */
export async function chargeUpFront(deps: Deps, bill: UpFrontBill): Promise<void> {
  const { teamId, plans, reference } = bill;
  // A WhatsApp code is charged once per conversation: found or opened in the charge's transaction,
  // which a 402 rolls back.
  const whatsapp = plans.some((p) => p.channel === "whatsapp" && p.cost > 0);
  const inTransaction = <T>(fn: (db: Db) => Promise<T>) => whatsapp ? deps.sql.begin(fn) : fn(deps.sql);
  await inTransaction(async (db) => {
    const opened = await openOtpConversation(db, teamId, plans, deps.now());
    const upFront = upFrontCost(bill);
    const atSend = plans.filter((p) => p.template.custom).reduce((sum, p) => sum + p.cost, 0);
    const available = await balanceMicros(db, teamId);
    if (available < upFront + atSend) throw insufficient(upFront + atSend, available);
    if (upFront === 0) return;
    const channels = plans.map((p) => p.channel).join(", ");
    const builtInOpened = opened && plans.some((p) => p.channel === "whatsapp" && !p.template.custom);
    const description = `OTP verification (${channels})${builtInOpened ? `; ${opened}` : ""}`;
    const after = await charge(db, teamId, upFront, reference, description);
    if (after === undefined) throw insufficient(upFront + atSend, await balanceMicros(db, teamId));
  });
}

/** Gives back what `chargeUpFront` took (the request failed before anything was sent). */
export async function refundUpFront(deps: Deps, bill: UpFrontBill): Promise<void> {
  const upFront = upFrontCost(bill);
  // Conversations before the wallet, in the order the charge locks them.
  await closeOtpConversations(deps.sql, bill.teamId, bill.plans);
  if (upFront > 0) await refund(deps.sql, bill.teamId, upFront, bill.reference, "OTP verification not started");
}

async function sendOne(
  deps: Deps,
  teamId: string,
  plan: PlannedMessage,
  options: { charging: boolean; sandbox: boolean; reference: string },
): Promise<ChannelResult> {
  const id = plan.id;
  const result: ChannelResult = {
    success: false,
    message_id: id,
    trigger_id: crypto.randomUUID(),
    execution_id: crypto.randomUUID(),
    used_custom_template: plan.template.custom,
  };
  // A custom-template message is charged now; a built-in one was charged up front.
  const charged = options.charging && plan.cost > 0;
  if (charged && plan.template.custom) {
    // A WhatsApp code charged here opened its conversation (see chargeUpFront).
    const description = plan.channel === "whatsapp"
      ? conversationCharge("AUTHENTICATION", id)
      : `OTP ${plan.channel} message`;
    const after = await charge(deps.sql, teamId, plan.cost, options.reference, description);
    if (after === undefined) {
      await closeOtpConversations(deps.sql, teamId, [plan]);
      return result;
    }
  }
  const message: OutboundMessage = {
    id,
    teamId,
    channel: plan.channel,
    to: plan.to,
    from: plan.template.from,
    fromName: plan.template.fromName,
    subject: plan.message.subject,
    html: plan.message.html,
    text: plan.message.text,
    priority: "high",
    triggerId: result.trigger_id,
  };
  try {
    if (plan.ownAccounts && !options.sandbox) await sendThroughAccounts(deps, teamId, message);
    else await deps.providers.get(plan.channel, { sandbox: options.sandbox }).send(message);
    result.success = true;
  } catch (err) {
    log("warn", "otp message not sent", { team_id: teamId, channel: plan.channel, error: String(err) });
    if (charged) {
      await closeOtpConversations(deps.sql, teamId, [plan]);
      await refund(deps.sql, teamId, plan.cost, options.reference, `OTP ${plan.channel} message failed`);
    }
  }
  return result;
}

/**
 * Sends a live message through the team's accounts, then the service's provider (failoverAccounts),
 * as the worker does; throws the last error when none took it. Nothing is resumed after a crash: the
 * code is asked for again.
 */
async function sendThroughAccounts(deps: Deps, teamId: string, message: OutboundMessage): Promise<void> {
  const route = await failoverAccounts(deps, teamId, message.channel);
  const result = await sendWithFailover(message, route.accounts, {
    breakers,
    failoverOnTimeout: route.failoverOnTimeout,
    now: deps.now,
  });
  if (!result.sent) throw result.error ?? new Error("No account can carry this message");
}

/**
 * Sends every planned message (test keys: outbox only) and reports each channel. A message that
 * fails is refunded; one whose send-time charge fails is not sent.
 */
export async function sendMessages(
  deps: Deps,
  teamId: string,
  plans: PlannedMessage[],
  options: { charging: boolean; sandbox: boolean; reference: string },
): Promise<Partial<Record<OtpChannel, ChannelResult>>> {
  const results = await Promise.all(plans.map((plan) => sendOne(deps, teamId, plan, options)));
  return Object.fromEntries(results.map((r, i) => [plans[i].channel, r]));
}

/** The channel results of a sandbox_mode session: nothing is sent. */
export function sandboxResults(plans: PlannedMessage[]): Partial<Record<OtpChannel, ChannelResult>> {
  return Object.fromEntries(plans.map((p) => [p.channel, {
    success: true,
    message_id: `sandbox_${newUlid()}`,
    trigger_id: crypto.randomUUID(),
    execution_id: crypto.randomUUID(),
    used_custom_template: p.template.custom,
  }]));
}
