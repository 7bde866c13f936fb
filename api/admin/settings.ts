import { createRoute, z } from "@hono/zod-openapi";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { PHONE_COUNTRIES } from "../../shared/phone.ts";
import { isTimeOfDay, isTimeZone } from "../../shared/quiet_hours.ts";
import { FRAUD_GUARD_DEFAULTS, patchTeamSettings, teamSettings } from "../../shared/team_settings.ts";
import { requireTeam } from "./queries.ts";
import { ADMIN, BadRequest, NotFound, TeamParam, Unauthorized } from "./schemas.ts";

/** A country our number lookup can tell (shared/phone.ts), any case, answered in upper case. */
const Country = z.string()
  .transform((c) => c.toUpperCase())
  .refine((c) => PHONE_COUNTRIES.has(c), {
    error: (issue) => `${issue.input} is not an ISO 3166-1 alpha-2 code of a country with phone numbers of its own`,
  });

const defaults = FRAUD_GUARD_DEFAULTS;

const FraudGuardPatch = z.strictObject({
  enabled: z.boolean().optional(),
  // At least 5: sends younger than 2 minutes are not judged yet (otp/fraud_guard.ts).
  window_minutes: z.number().int().min(5).max(1440).optional()
    .openapi({ description: `Default ${defaults.window_minutes}` }),
  min_sends: z.number().int().min(1).max(1000).optional().openapi({ description: `Default ${defaults.min_sends}` }),
  min_verify_ratio: z.number().positive().max(1).optional()
    .openapi({ description: `Default ${defaults.min_verify_ratio}` }),
  block_minutes: z.number().positive().max(10_080).optional()
    .openapi({ description: `Default ${defaults.block_minutes}` }),
}).openapi("AdminFraudGuardPatch");

/** A time of day "HH:MM", 24-hour. */
const TimeOfDay = (name: string) =>
  z.string().refine(isTimeOfDay, {
    error: (issue) => `quiet_hours.${name} ${JSON.stringify(issue.input)} is not a time of day HH:MM (00:00 to 23:59)`,
  });

/** Quiet hours: the window and the zone it is read in when a contact has no `custom_fields.timezone`. */
const QuietHoursSchema = z.strictObject({
  start: TimeOfDay("start"),
  end: TimeOfDay("end"),
  timezone: z.string().refine(isTimeZone, {
    error: (issue) =>
      `quiet_hours.timezone ${JSON.stringify(issue.input)} is not an IANA time zone (e.g. Europe/Paris)`,
  }),
}).refine((q) => q.start !== q.end, { error: "quiet_hours.start and quiet_hours.end must differ" })
  .openapi("AdminQuietHours", {
    description: "Promotional messages due between `start` (inclusive) and `end` (exclusive), local time of the " +
      "contact's `custom_fields.timezone` or else of `timezone`, are held until `end` (docs/sending.md, 'Quiet hours'). " +
      "An `end` before `start` crosses midnight.",
    example: { start: "21:00", end: "08:00", timezone: "Europe/Paris" },
  });

/** `PATCH /teams/{team_id}/settings` body. */
const SettingsPatchBody = z.strictObject({
  otp: z.strictObject({
    allowed_countries: z.array(Country).max(300).nullable().optional().openapi({
      description: "Countries an OTP may be sent to by SMS or WhatsApp (null: all). A send with a number " +
        "elsewhere is 403 `otp_country_not_allowed`, whole, not charged.",
    }),
    fraud_guard: FraudGuardPatch.optional(),
  }).optional(),
  quiet_hours: QuietHoursSchema.nullable().optional(),
}).openapi("AdminTeamSettingsPatch");

/** A team's settings, defaults filled in. */
const TeamSettingsSchema = z.object({
  otp: z.object({
    allowed_countries: z.array(z.string()).nullable(),
    fraud_guard: z.object({
      enabled: z.boolean(),
      window_minutes: z.number(),
      min_sends: z.number(),
      min_verify_ratio: z.number(),
      block_minutes: z.number(),
    }),
  }),
  quiet_hours: z.object({ start: z.string(), end: z.string(), timezone: z.string() }).nullable(),
}).openapi("AdminTeamSettings");

/** A team's settings: read, and changed field by field. */
export function adminSettingsRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "get",
      path: "/teams/{team_id}/settings",
      ...ADMIN,
      summary: "A team's settings, defaults filled in",
      description:
        "The team's OTP settings: `allowed_countries` (null: every country) and the fraud guard's thresholds, with the defaults filled in where the team set nothing (docs/otp.md, 'Fraud guard'); and its `quiet_hours` (null: none).",
      request: { params: TeamParam },
      responses: { 200: jsonResponse(TeamSettingsSchema, "The settings"), 401: Unauthorized, 404: NotFound },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      return c.json(await teamSettings(deps.sql, team.id), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/teams/{team_id}/settings",
      ...ADMIN,
      summary: "Change some of a team's settings",
      description: "Fields given replace the team's; fields left out keep theirs. `allowed_countries` is " +
        "replaced as a whole (null: every country). The OTP fraud guard blocks a number prefix for " +
        "`block_minutes` when, in `window_minutes`, at least `min_sends` sends to it (older than 2 minutes) " +
        "were verified less than `min_verify_ratio` of the time (docs/otp.md). `quiet_hours` is " +
        "replaced as a whole (null: none).",
      request: { params: TeamParam, body: jsonBody(SettingsPatchBody) },
      responses: {
        200: jsonResponse(TeamSettingsSchema, "The settings now in force"),
        400: BadRequest,
        401: Unauthorized,
        404: NotFound,
      },
    }),
    async (c) => {
      const team = await requireTeam(deps.sql, c.req.valid("param").team_id);
      const patch = c.req.valid("json");
      const countries = patch.otp?.allowed_countries;
      const otp = countries ? { ...patch.otp, allowed_countries: [...new Set(countries)] } : patch.otp;
      return c.json(await patchTeamSettings(deps.sql, team.id, { otp, quiet_hours: patch.quiet_hours }), 200);
    },
  );

  return app;
}
