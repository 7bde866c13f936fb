/**
 * The OTP role alone (`/api/v1/otp/*`): `deno run -A otp/main.ts`, beside a worker process
 * (`worker/main.ts`) on the same DATABASE_URL (and, with ENGINE=kv, KV file), which runs the webhooks its sessions emit.
 * See shared/roles.ts for what a single-role process needs; `main.ts` runs all roles in one process.
 */
import { serve } from "../main.ts";

if (import.meta.main) await serve({ api: false, otp: true, worker: false });
