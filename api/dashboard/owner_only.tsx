import type { Context, Next } from "hono";
import type { DashboardEnv } from "./env.ts";
import { MessagePage } from "./layout.tsx";

/** Lets owners through; a member gets a 403 page that says who can do this. */
export function ownerOnly(what: string) {
  return async function requireOwner(c: Context<DashboardEnv>, next: Next): Promise<Response | void> {
    const user = c.get("user");
    if (user.role === "owner") return await next();
    const message = `Only an owner of ${user.teamName} can ${what}. Ask an owner if you need this done.`;
    return c.html(<MessagePage title="Owners only" message={message} user={user} />, 403);
  };
}
