import type { Db } from "../db.ts";
import type { OutboundMessage, Provider, SendResult } from "./types.ts";

/** A message as the outbox keeps it. */
export interface OutboxRow {
  id: string;
  team_id: string;
  channel: string;
  to_address: string;
  subject: string | null;
  body: string | null;
  trigger_id: string | null;
  created_at: Date;
}

/** What the outbox keeps of a message's content: a subject (a push title) and a body. */
export function outboxContent(m: OutboundMessage): { subject: string | null; body: string | null } {
  return {
    subject: m.channel === "push" ? m.title ?? null : m.subject ?? null,
    body: m.channel === "email" ? m.html ?? m.text ?? null : m.text ?? null,
  };
}

/**
 * The default provider: records every message so that a person or a test can read it (the `outbox_all`
 * view). A message the worker records keeps its copy in its own message row (worker/deliver.ts,
 * migration 011); this provider's `send` keeps the copy of any other (an OTP code) apart.
 */
export class OutboxProvider implements Provider {
  readonly name = "outbox";
  readonly resendable = true;
  #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async send(m: OutboundMessage): Promise<SendResult> {
    const row = {
      id: m.id,
      team_id: m.teamId,
      channel: m.channel,
      to_address: m.to,
      ...outboxContent(m),
      trigger_id: m.triggerId ?? null,
    };
    await this.#db`insert into outbox ${this.#db(row)} on conflict (id) do nothing`;
    return { providerMessageId: outboxMessageId(m.id) };
  }
}

/** The provider message id the outbox gives a message. */
export function outboxMessageId(id: string): string {
  return `outbox_${id}`;
}
