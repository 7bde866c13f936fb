import { KvCommitter } from "../kv.ts";
import { dbTest, testRuntime } from "../testing.ts";
import { kvHotState } from "./kv/hot_state.ts";
import type { HotState } from "./ports.ts";
import { postgresHotState } from "./postgres/hot_state.ts";

/** One engine's hot state under test, and how to open another process's view of the same store. */
export interface EngineUnderTest {
  hot: HotState;
  /** The hot state of a second process on the same store (closed with the test). */
  another(): HotState;
}

/** The engines every contract case runs on: Deno KV in memory, and Postgres (PGlite, or DATABASE_URL's server). */
const ENGINES: Record<string, () => Promise<{ open(): HotState; close(): void }>> = {
  kv: async () => {
    const kv = await Deno.openKv(":memory:");
    const committer = new KvCommitter(kv);
    return { open: () => kvHotState(kv, committer), close: () => kv.close() };
  },
  postgres: async () => {
    const { sql } = (await testRuntime()).deps;
    return { open: () => postgresHotState(sql), close: () => {} };
  },
};

/** Registers `fn` as one test per engine, named `<name> [<engine>]`. */
export function engineTest(name: string, fn: (engine: EngineUnderTest) => Promise<void>): void {
  for (const [engine, start] of Object.entries(ENGINES)) {
    dbTest(`${name} [${engine}]`, async () => {
      const store = await start();
      const opened: HotState[] = [];
      const open = () => {
        const hot = store.open();
        opened.push(hot);
        return hot;
      };
      try {
        await fn({ hot: open(), another: open });
      } finally {
        for (const hot of opened) await hot.close();
        store.close();
      }
    });
  }
}

/** A scope no other test uses. */
export function randomScope(): string {
  return `scope-${crypto.randomUUID()}`;
}
