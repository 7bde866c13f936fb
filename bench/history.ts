/** A team's message history, seeded straight into the database (scenarios that need a service in use). */
import type postgres from "postgres";

/**
 * Seeds `messages` messages of the team (ids historyMessageId(idPrefix, n), n from 1), one a contact of `contacts` round and round (the contacts
 * need not exist), 1,000 a trigger, one every 5 s back from now, one in 50 failed; then analyzes
 * the table. A service in use has such a history and its planner statistics: on a fresh database
 * the planner takes the table for empty and scans it whole for statements that pick rows by id.
 */
export async function seedMessages(
  sql: postgres.Sql,
  teamId: string,
  contacts: number,
  messages: number,
  idPrefix = "bench",
) {
  await sql`
    insert into messages (id, execution_id, recipient, team_id, trigger_id, channel, to_address, contact_id,
      status, provider, provider_message_id, cost_micros, error, created_at, sent_at, template_key)
    select ${idPrefix} || lpad(n::text, 9, '0'),
      md5(${teamId} || ':e:' || (n / 1000))::uuid,
      'person' || (n % ${contacts}::int + 1) || '@bench.example',
      ${teamId}, md5(${teamId} || ':t:' || (n / 1000))::uuid,
      (array['email', 'sms', 'whatsapp', 'push'])[n % 4 + 1],
      'person' || (n % ${contacts}::int + 1) || '@bench.example',
      md5(${teamId} || ':c:' || (n % ${contacts}::int + 1))::uuid,
      case when n % 50 = 1 then 'failed' else 'sent' end, 'bench', 'pm-' || n, 1000,
      case when n % 50 = 1 then 'Bench failure' end,
      now() - n * interval '5 seconds', now() - n * interval '5 seconds', 'bench'
    from generate_series(1, ${messages}::int) n`;
  await sql`analyze messages`;
}

/** The id seedMessages() gives its n-th message. */
export function historyMessageId(idPrefix: string, n: number): string {
  return `${idPrefix}${String(n).padStart(9, "0")}`;
}
