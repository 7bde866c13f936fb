import { randomBase62 } from "./api_keys.ts";
import type { Db } from "./db.ts";
import { ConflictError, isUniqueViolation } from "./errors.ts";
import { hashPassword } from "./passwords.ts";

/** What a dashboard user may do: owners also manage keys and users; members only look. */
export type DashboardRole = "owner" | "member";

/** A dashboard user as shown (never the password hash). */
export interface DashboardUser {
  id: string;
  email: string;
  role: DashboardRole;
  team_id: string;
  created_at: Date;
}

/**
 * Creates a dashboard user of a team with its password hashed; 409 when the email already has an
 * account (a user belongs to one team and signs in by email alone).
 */
export async function createDashboardUser(
  db: Db,
  input: { teamId: string; email: string; password: string; role: DashboardRole },
): Promise<DashboardUser> {
  const row = {
    team_id: input.teamId,
    email: input.email,
    role: input.role,
    password_hash: await hashPassword(input.password),
  };
  try {
    const [user]: [DashboardUser] = await db`
      insert into dashboard_users ${db(row, "team_id", "email", "role", "password_hash")}
      returning id, email, role, team_id, created_at`;
    return user;
  } catch (err) {
    if (isUniqueViolation(err)) {
      throw new ConflictError("A dashboard user with this email already exists", "user_exists");
    }
    throw err;
  }
}

/** A password of 20 base62 characters (≈119 bits) for an account whose first password the service makes. */
export function generatePassword(): string {
  return randomBase62(20);
}
