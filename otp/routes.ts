import { createRoute } from "@hono/zod-openapi";
import type { Context, Next } from "hono";
import type { AppEnv } from "../shared/http/env.ts";
import type { Deps } from "../shared/deps.ts";
import { newRouter } from "../shared/http/app.ts";
import { clientIp } from "./limits.ts";
import { resendOtp } from "./resend.ts";
import { OtpError, ResendBody, ResendResponse, SendBody, SendResponse, VerifyBody, VerifyResponse } from "./schemas.ts";
import { sendOtp } from "./send.ts";
import { verifyBody, verifyOtp } from "./verify.ts";
import { tag } from "../shared/http/openapi.ts";
import { SEND_HEADERS } from "../shared/http/openapi.ts";
import { jsonBody } from "../shared/http/schemas.ts";
import { RESEND_OTP_EXAMPLES, SEND_OTP_EXAMPLES, VERIFY_OTP_EXAMPLES } from "./examples.ts";

const json = <T>(schema: T) => ({ "application/json": { schema } });
const errors = (...codes: number[]) =>
  Object.fromEntries(codes.map((code) => [code, { description: "Error (Shape A)", content: json(OtpError) }]));

/**
 * Every verify answer carries `attempts_remaining` (DESIGN.md), also those given before a session is
 * read: a refused key, a bad body. With no session to count, it is 0. Mounted on the verify path
 * ahead of the key check, so that its errors carry it too.
 */
export async function verifyAnswersCountAttempts(c: Context<AppEnv>, next: Next): Promise<void> {
  c.set("errorFields", { attempts_remaining: 0 });
  await next();
}

/** OTP endpoints under /api/v1/otp: send, verify, resend. */
export function otpRoutes(deps: Deps) {
  const app = newRouter();

  app.openapi(
    createRoute({
      method: "post",
      path: "/send",
      tags: tag("OTP"),
      summary: "Send an OTP on one or more channels",
      description:
        "Opens a session and sends a code on each channel to its recipient. Keep `session_token` for verify and " +
        "resend. `verification_mode: any` verifies the session with one channel, `all` needs every channel. With " +
        "`sandbox_mode: true` nothing is sent or charged and the codes come back in `sandbox_otps`. Custom " +
        "templates under the reserved keys (`verify-api-otp-email`, `verify-api-otp-sms`, " +
        "`verify_api_otp_whatsapp`) are used when they exist. 403 `otp_country_not_allowed` when a phone number is " +
        "outside the team's allowed countries (the whole send is refused), 403 `otp_fraud_suspected` when its " +
        "number prefix is blocked for suspected SMS pumping; neither sends nor charges anything (docs/otp.md, " +
        "'Fraud guard').",
      parameters: SEND_HEADERS,
      request: { body: jsonBody(SendBody, SEND_OTP_EXAMPLES) },
      responses: {
        200: { description: "Session opened and codes sent", content: json(SendResponse) },
        ...errors(400, 402, 403, 429),
      },
    }),
    async (c) => {
      const input = c.req.valid("json");
      const caller = { teamId: c.get("team").id, apiKey: c.get("apiKey"), ip: clientIp(c, deps.config.TRUST_PROXY) };
      const { session, token, results, codes } = await sendOtp(deps, caller, input);
      const expiresAt = new Date(session.expires_at).toISOString();
      const channelsSent = Object.fromEntries(
        Object.entries(results).map(([ch, r]) => [ch, { success: r.success, message_id: r.message_id }]),
      );
      return c.json({
        success: true as const,
        session_token: token,
        token,
        session_id: session.id,
        channels_sent: channelsSent,
        channels_results: Object.fromEntries(
          Object.entries(results).map(([ch, r]) => [ch, {
            success: r.success,
            trigger_id: r.trigger_id,
            execution_id: r.execution_id,
            used_custom_template: r.used_custom_template,
          }]),
        ),
        expires_at: expiresAt,
        verification_mode: session.verification_mode,
        ...(codes ? { sandbox_otps: codes } : {}),
        data: {
          session_id: session.id,
          session_token: token,
          expires_at: expiresAt,
          channels: session.channels,
          recipients: session.recipients,
          ...(codes ? { otps: codes } : {}),
        },
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/verify",
      tags: tag("OTP"),
      summary: "Verify the codes of one or more channels",
      description: "Any call whose codes were checked answers 200, also a wrong code: clients treat a non-2xx " +
        "verify as a transport failure. `verified: true` when at least one code of the call was right; " +
        "`verified: false`, `success: false` and the message 'Invalid OTP' when none was (each wrong code " +
        "uses one attempt). The call that uses the last attempt answers that 200 with `attempts_remaining: " +
        "0`; the session is then locked (the `otp.locked` webhook event), and later calls answer 400 " +
        "'Maximum attempts exceeded: session is locked due to too many failed attempts'. An unknown " +
        "session, a channel not sent, an expired or a locked session stay 400. The result is mirrored in `data`.",
      request: { body: jsonBody(VerifyBody, VERIFY_OTP_EXAMPLES) },
      responses: {
        200: { description: "The codes were checked (right or wrong)", content: json(VerifyResponse) },
        ...errors(400),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const token = (body.session_token ?? body.token)!;
      const outcome = await verifyOtp(deps, c.get("team").id, token, body.otps);
      return c.json(verifyBody(outcome), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "post",
      path: "/resend",
      tags: tag("OTP"),
      summary: "Send new codes for a session",
      description:
        "New codes on every channel of the session, with the attempts reset and the expiry extended; the token " +
        "stays the same. 400 when the session is verified or locked; 403 `otp_fraud_suspected` when a number " +
        "prefix of the session is blocked for suspected SMS pumping.",
      request: { body: jsonBody(ResendBody, RESEND_OTP_EXAMPLES) },
      responses: {
        200: { description: "New codes sent", content: json(ResendResponse) },
        ...errors(400, 402, 403, 429),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      const token = (body.session_token ?? body.token)!;
      const { session, results, codes } = await resendOtp(deps, c.get("team").id, token, c.get("apiKey").test);
      return c.json({
        success: true as const,
        message: "OTP resent successfully",
        expires_at: new Date(session.expires_at).toISOString(),
        channels_sent: Object.fromEntries(
          Object.entries(results).map(([ch, r]) => [ch, { success: r.success, message_id: r.message_id }]),
        ),
        ...(codes ? { sandbox_otps: codes } : {}),
      }, 200);
    },
  );

  return app;
}
