import { bulkRows } from "../bulk.ts";
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

function toRow(m: OutboundMessage) {
  return {
    id: m.id,
    team_id: m.teamId,
    channel: m.channel,
    to_address: m.to,
    subject: m.channel === "push" ? m.title ?? null : m.subject ?? null,
    body: m.channel === "email" ? m.html ?? m.text ?? null : m.text ?? null,
    trigger_id: m.triggerId ?? null,
  };
}

/** The default provider: records every message so that a person or a test can read it. */
export class OutboxProvider implements Provider {
  readonly name = "outbox";
  readonly resendable = true;
  #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async send(message: OutboundMessage): Promise<SendResult> {
    await this.#db`insert into outbox ${this.#db(toRow(message))} on conflict (id) do nothing`;
    return { providerMessageId: `outbox_${message.id}` };
  }

  /** Records many messages in one INSERT (the fan-out path; see bulkRows). */
  async sendMany(messages: OutboundMessage[]): Promise<SendResult[]> {
    if (messages.length > 0) {
      const rows = messages.map(toRow);
      const col = <K extends keyof ReturnType<typeof toRow>>(k: K) => rows.map((r) => r[k]);
      await this.#db`
        insert into outbox ${
        bulkRows(this.#db, {
          id: { type: "text", values: col("id") },
          team_id: { type: "uuid", values: col("team_id") },
          channel: { type: "text", values: col("channel") },
          to_address: { type: "text", values: col("to_address") },
          subject: { type: "text", values: col("subject") },
          body: { type: "text", values: col("body") },
          trigger_id: { type: "uuid", values: col("trigger_id") },
        })
      }
        on conflict (id) do nothing`;
    }
    return messages.map((m) => ({ providerMessageId: `outbox_${m.id}` }));
  }
}
