import type { Deps } from "../shared/deps.ts";
import { newRouter } from "../shared/http/app.ts";

/** OTP endpoints under /api/v1/otp. */
export function otpRoutes(_deps: Deps) {
  const app = newRouter();
  return app;
}
