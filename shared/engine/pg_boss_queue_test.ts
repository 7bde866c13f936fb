import { pgBossFixture, serverTest } from "./pg_boss_testing.ts";
import { queueContract } from "./queue_contract.ts";

queueContract("pg-boss", pgBossFixture, serverTest);
