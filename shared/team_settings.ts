/**
 * A team's settings (`PATCH /admin/v1/teams/{team_id}/settings`), read by the OTP send path and by
 * the worker (quiet hours). Only what a team set is stored; the rest comes from the defaults here.
 */
import { asJson, type Db, type Sql } from "./db.ts";
import type { QuietHours } from "./quiet_hours.ts";
import { TtlCache } from "./ttl_cache.ts";

/** The thresholds of SMS-pumping detection (otp/fraud_guard.ts). */
export interface FraudGuardSettings {
  enabled: boolean;
  /** The sliding window in which sends and verifications of a number prefix are counted. */
  window_minutes: number;
  /** Sends in the window (older than the grace period) before the verify ratio is judged. */
  min_sends: number;
  /** Below this share of verified sends, the prefix is blocked. */
  min_verify_ratio: number;
  /** How long a blocked prefix stays blocked. */
  block_minutes: number;
}

/** Every setting of a team, defaults filled in. */
export interface TeamSettings {
  otp: {
    /** ISO 3166-1 alpha-2 codes an OTP may be sent to by SMS or WhatsApp; null: every country. */
    allowed_countries: string[] | null;
    fraud_guard: FraudGuardSettings;
  };
  /** When the team's promotional messages wait (shared/quiet_hours.ts); null: never. */
  quiet_hours: QuietHours | null;
}

/** What a team set (the stored jsonb, and a PATCH body): a field absent keeps its value. */
export interface SettingsPatch {
  otp?: {
    allowed_countries?: string[] | null;
    fraud_guard?: Partial<FraudGuardSettings>;
  };
  /** Replaced as a whole; null clears it. */
  quiet_hours?: QuietHours | null;
}

/** The fraud guard's thresholds for a team that set none (docs/otp.md says why these). */
export const FRAUD_GUARD_DEFAULTS: Readonly<FraudGuardSettings> = {
  enabled: true,
  window_minutes: 10,
  min_sends: 30,
  min_verify_ratio: 0.1,
  block_minutes: 60,
};

/** The settings a team has, from what it set. */
export function effectiveSettings(stored: SettingsPatch): TeamSettings {
  return {
    otp: {
      allowed_countries: stored.otp?.allowed_countries ?? null,
      fraud_guard: { ...FRAUD_GUARD_DEFAULTS, ...stored.otp?.fraud_guard },
    },
    quiet_hours: stored.quiet_hours ?? null,
  };
}

/**
 * `patch` over `current`: a list replaces the list (null clears it), thresholds merge one by one,
 * quiet hours are replaced whole (null clears them).
 */
export function mergeSettings(current: SettingsPatch, patch: SettingsPatch): SettingsPatch {
  const otp = { ...current.otp };
  if (patch.otp?.allowed_countries !== undefined) otp.allowed_countries = patch.otp.allowed_countries;
  if (patch.otp?.fraud_guard) otp.fraud_guard = { ...otp.fraud_guard, ...patch.otp.fraud_guard };
  const quiet = patch.quiet_hours === undefined ? {} : { quiet_hours: patch.quiet_hours };
  return { ...current, otp, ...quiet };
}

/**
 * Settings per team, cached 5 s: the OTP send path reads them on every send. A PATCH forgets its
 * team's entry in this process; other processes see it within the 5 s.
 */
const cache = new TtlCache<TeamSettings>(5_000);

async function storedSettings(db: Db, teamId: string): Promise<SettingsPatch> {
  const [row]: [{ settings: SettingsPatch }?] = await db`
    select settings from team_settings where team_id = ${teamId}`;
  return row?.settings ?? {};
}

/** A team's settings (cached, see above). */
export function teamSettings(db: Db, teamId: string): Promise<TeamSettings> {
  return cache.get(teamId, Date.now(), async () => effectiveSettings(await storedSettings(db, teamId)));
}

/** Merges `patch` into what the team set (one transaction) and answers the settings it now has. */
export async function patchTeamSettings(sql: Sql, teamId: string, patch: SettingsPatch): Promise<TeamSettings> {
  const merged = await sql.begin(async (tx) => {
    await tx`insert into team_settings ${tx({ team_id: teamId })} on conflict (team_id) do nothing`;
    const [row]: [{ settings: SettingsPatch }] = await tx`
      select settings from team_settings where team_id = ${teamId} for update`;
    const next = mergeSettings(row.settings, patch);
    await tx`
      update team_settings set ${tx({ settings: asJson(next) }, "settings")}, updated_at = now()
      where team_id = ${teamId}`;
    return next;
  });
  cache.delete(teamId);
  return effectiveSettings(merged);
}
