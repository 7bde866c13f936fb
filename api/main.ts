/**
 * The API role alone (every REST endpoint except OTP): `deno run -A api/main.ts`, beside a worker
 * process (`worker/main.ts`) on the same DATABASE_URL (and, with ENGINE=kv, KV file), which delivers what this one accepts.
 * See shared/roles.ts for what a single-role process needs; `main.ts` runs all roles in one process.
 */
import { serve } from "../main.ts";

if (import.meta.main) await serve({ api: true, otp: false, worker: false });
