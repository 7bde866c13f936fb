/**
 * What the crash test does to the service while its sends run (RunPlan.disrupt): SIGKILL its one
 * process and restart it; SIGKILL replicas (one, or two at once) while the others go on; stop its
 * PostgreSQL server and start it again.
 */
import type { PrivatePostgres } from "./private_postgres.ts";
import { checkProgress, type RunWorld, waitForProgress } from "./run.ts";
import { delay } from "./service.ts";

/** mulberry32: a small seeded generator, so that a failing run can be replayed with its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Waits (at most 60 s) until the failover team's accounts have been handed an SMS: its send may run
 * after the earlier kills, and the last kill is to land while it runs (it takes seconds).
 */
async function failoverUnderWay(world: RunWorld): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (world.failoverHanded() === 0 && Date.now() < deadline) await delay(50);
}

/**
 * `kills` times: SIGKILL the service at a random moment and start it again on the same data (the
 * last kill once the failover send is under way).
 */
export function killAndRestart(kills: number, random: () => number) {
  return async (world: RunWorld): Promise<void> => {
    const service = world.services[0];
    for (let kill = 1; kill <= kills; kill++) {
      if (kill === kills) await failoverUnderWay(world);
      const wait = Math.round(100 + random() * 900);
      await delay(wait);
      await service.kill();
      world.lastDisruptionAt = Date.now();
      const at = world.lastDisruptionAt - world.firedAt;
      const restartedAt = Date.now();
      await service.start();
      const healthyMs = await service.waitHealthy(restartedAt);
      const progress = await waitForProgress(world.api(0), world, restartedAt);
      const outcome = checkProgress(world, `kill ${kill}`, progress);
      console.log(
        `kill ${kill}: SIGKILL after ${wait} ms (${at} ms after firing); /healthz ok ${healthyMs} ms after the restart; ${outcome}`,
      );
      world.recoveries.push(`kill ${kill}: healthy ${healthyMs} ms; ${outcome}`);
    }
  };
}

/**
 * `kills` times: SIGKILL a random replica (every third time two at once) at a random moment; the
 * others must go on delivering (the victims' jobs are theirs once pg-boss finds the heartbeats lost).
 * The victims are started again after a random pause and the next kill does not wait for them, so
 * that the kills land while the sends run; a replica is killed only once it is healthy again, and
 * one healthy replica is always left. The last kill waits until the failover send is under way.
 */
export function killReplicas(kills: number, random: () => number) {
  return async (world: RunWorld): Promise<void> => {
    const n = world.services.length;
    const healthy = new Set(world.services.keys());
    const restarts: Promise<void>[] = [];
    let failedRestart: Error | undefined;
    for (let kill = 1; kill <= kills; kill++) {
      if (kill === kills) await failoverUnderWay(world);
      const wait = Math.round(300 + random() * 1_200);
      await delay(wait);
      while (healthy.size < 2) {
        if (failedRestart) throw failedRestart;
        await delay(100);
      }
      const candidates = [...healthy];
      const count = kill % 3 === 0 && candidates.length >= 3 ? 2 : 1;
      const victims: number[] = [];
      while (victims.length < count) {
        const i = candidates.splice(Math.floor(random() * candidates.length), 1)[0];
        victims.push(i);
        healthy.delete(i);
      }
      await Promise.all(victims.map((i) => world.services[i].kill()));
      const killedAt = world.lastDisruptionAt = Date.now();
      const at = killedAt - world.firedAt;
      const survivor = candidates[0];
      const progress = await waitForProgress(world.api(survivor), world, killedAt);
      const outcome = checkProgress(world, `kill ${kill}`, progress);
      const line = `kill ${kill}: SIGKILL of replica ${
        victims.join(" and ")
      } (of ${n}) after ${wait} ms (${at} ms after firing); the others ${
        outcome.replace("after it", "after the kill")
      }`;
      console.log(line);
      world.recoveries.push(line);
      await delay(Math.round(random() * 2_000));
      for (const i of victims) {
        const restartedAt = Date.now();
        await world.services[i].start();
        restarts.push(
          world.services[i].waitHealthy(restartedAt).then((ms) => {
            healthy.add(i);
            world.recoveries.push(`replica ${i} restarted after kill ${kill}: /healthz ok ${ms} ms after`);
          }, (err) => {
            failedRestart = err;
          }),
        );
      }
    }
    await Promise.all(restarts);
    if (failedRestart) throw failedRestart;
  };
}

/** How long the database stays down at each restart. */
const DOWN_MS = 3_000;

/**
 * `restarts` times, at a random moment: stop the PostgreSQL server (immediate: connections cut),
 * check that every process's /healthz answers 503, start it again after DOWN_MS, and check that
 * /healthz answers 200 and delivery resumes with nothing done to the service.
 */
export function restartDatabase(server: PrivatePostgres, restarts: number, random: () => number) {
  return async (world: RunWorld): Promise<void> => {
    for (let restart = 1; restart <= restarts; restart++) {
      const wait = Math.round(300 + random() * 1_200);
      await delay(wait);
      await server.stop();
      const downAt = world.lastDisruptionAt = Date.now();
      const unavailableMs = Math.max(
        ...await Promise.all(world.services.map((service) => service.waitUnavailable(downAt))),
      );
      await delay(Math.max(0, downAt + DOWN_MS - Date.now()));
      await server.start();
      const backAt = world.lastDisruptionAt = Date.now();
      const healthyMs = Math.max(...await Promise.all(world.services.map((service) => service.waitHealthy(backAt))));
      const progress = await waitForProgress(world.api(0), world, backAt);
      const outcome = checkProgress(world, `database restart ${restart}`, progress);
      const line = `database restart ${restart} after ${wait} ms: /healthz 503 ${unavailableMs} ms after the stop; ` +
        `down ${backAt - downAt} ms; /healthz ok ${healthyMs} ms after the start; ${outcome}`;
      console.log(line);
      world.recoveries.push(line);
    }
  };
}
