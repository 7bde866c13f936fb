import { KvCommitter } from "../../kv.ts";
import { queueContract, type QueueFixture } from "../queue_contract.ts";
import { CheckedCommitter } from "./checked_commit.ts";
import { KvQueue } from "./queue.ts";
import { kvAtomically } from "./unit.ts";

/**
 * Each test gets a KV file of its own; every `open` is another process's view of it (its own
 * Deno.Kv on the same file), as the roles of one host share theirs.
 */
async function kvFixture(): Promise<QueueFixture> {
  const dir = await Deno.makeTempDir({ prefix: "kv-queue-" });
  const path = `${dir}/queue.sqlite3`;
  const first = await Deno.openKv(path);
  const opened = [first];
  const checked = new CheckedCommitter(first);
  fixtures.push({ opened, dir });
  return {
    atomically: (work) => kvAtomically(checked, work),
    pollMs: 1_000,
    open: async () => {
      // A unit's job, committed through `first`, is in the file every queue here listens to.
      const kv = await Deno.openKv(path);
      opened.push(kv);
      return new KvQueue(kv, new KvCommitter(kv));
    },
  };
}

const fixtures: { opened: Deno.Kv[]; dir: string }[] = [];

queueContract("Deno KV", kvFixture, (name, fn) =>
  Deno.test(name, async () => {
    try {
      await fn();
    } finally {
      for (const { opened, dir } of fixtures.splice(0)) {
        for (const kv of opened) kv.close();
        await Deno.remove(dir, { recursive: true });
      }
    }
  }));
