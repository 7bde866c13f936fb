/** The guide at the top of the OpenAPI document (Markdown): what a caller needs before the first request. */
export const API_GUIDE = `
A REST API for contacts and for messages to them on email, SMS, WhatsApp and push, with one-time
passwords, multi-step workflows, events and delivery tracking. Every path starts with \`/api/v1\`;
requests and answers are JSON (\`Content-Type: application/json\`); timestamps are ISO 8601 in UTC
with milliseconds (\`2026-11-21T10:00:00.000Z\`).

## Authentication

Every request carries its key in the \`X-API-Key\` header:

\`\`\`sh
curl https://api.example.com/api/v1/contacts -H "X-API-Key: sk_live_…"
\`\`\`

A missing or unknown key is 401. Keys are created in the dashboard (or by the operator's admin API)
and stored only as hashes: a key is shown once.

| Key | Prefix | May |
|---|---|---|
| Secret, live | \`sk_live_\` | everything; sends really go out and are charged |
| Secret, test | \`sk_test_\` | everything, in sandbox (see below) |
| Publishable | \`pk_live_\`, \`pk_test_\` | create a contact, read and change a contact's preferences, send an event; anything else is 403 |

Secret keys belong on your server only: never in a browser or an app. Publishable keys may be used
client-side (a preference centre, a sign-up form). Use separate keys per environment and rotate them.

\`X-Team-ID\` names the key's team. It is required on \`POST /api/v1/events/send\` and optional elsewhere;
when sent, another team's id is 401 'Invalid team context'. Everything a key reaches belongs to its team.

## Test keys

A test key (\`sk_test_\`, \`pk_test_\`) runs the same code as a live one, but every message goes to the
outbox (readable by the operator at \`GET /admin/v1/outbox\`) instead of a provider, and nothing is
charged. OTP sends with \`sandbox_mode: true\` also send nothing and return the codes in \`sandbox_otps\`,
so that tests can verify them. The request examples of this document work with a test key against a
team that has the templates and contacts they name.

## Sending is asynchronous

A send, a multi-channel trigger, a workflow start or an event answers **201** as soon as it is
accepted, with a \`trigger_id\` (and a \`job_id\`); delivery happens in the background. Follow it with
\`GET /api/v1/triggers/{trigger_id}\`, or receive webhooks. A future time schedules the send; the field
is \`triggerAt\` on SMS and WhatsApp, \`scheduled_at\` on push and \`trigger_at\` elsewhere (each accepts
the other two as well).

## Errors

Errors are JSON with a status and a stable \`code\` to switch on:

\`\`\`json
{ "statusCode": 404, "message": "Contact with external_id 'user_123' not found", "error": "Not Found", "code": "contact_not_found" }
\`\`\`

A request that fails validation is 400 with \`message\` a list, one entry a problem (\`"title should
not be empty"\`). A missing or unknown key is 401 with \`error: {type: "authentication_error", message}\`
(and \`statusCode\`, \`message\` at the top too).

| Status | Meaning |
|---|---|
| 400 | Invalid request (see \`message\`) |
| 401 | Missing or invalid API key, or wrong \`X-Team-ID\` |
| 402 | Wallet balance too low (OTP) |
| 403 | The key may not do this (publishable key) |
| 404 | Not found (unknown route: 'Cannot GET /path') |
| 409 | Duplicate, or the same \`Idempotency-Key\` still in flight |
| 413 | Body over 1 MiB |
| 415 | Body not declared as \`application/json\` |
| 422 | \`Idempotency-Key\` reused with another body |
| 429 | Rate limit exceeded (see \`Retry-After\`) |
| 500 | Internal error (with a request id to quote) |

## Idempotency

Send an \`Idempotency-Key\` header (a UUID of your own) with every send, trigger, OTP send, event and
workflow start, and retry with the same key after a timeout. The same key and body within 24 hours
answer the first response again, with the header \`Idempotent-Replayed: true\`, and send nothing more.
The same key with another body is 422; a retry while the first request is still running is 409.

## Rate limits

Each key may make a number of requests an hour by plan: free 100, pro 10,000, plus 50,000, enterprise
by agreement. Every answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and
\`X-RateLimit-Reset\` (epoch seconds); past the limit the answer is 429 with \`Retry-After\` (seconds).
Multi-channel triggers have a limit of their own per minute (free 10, pro 100, plus 500) and of
channels per trigger (free 2, others 4). OTP sends are limited to 5 per 5 minutes per recipient,
20 an hour per client address and 100 active sessions per team.

Every answer also carries \`X-Request-Id\`: quote it when you report a problem.
`.trim();
