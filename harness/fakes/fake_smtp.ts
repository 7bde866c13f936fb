/**
 * A fake SMTP server for tests, on Deno.listen: enough of RFC 5321 (EHLO/HELO, AUTH PLAIN and LOGIN,
 * MAIL FROM, RCPT TO, DATA, RSET, NOOP, QUIT) for nodemailer, with the replies a real server gives
 * to bad credentials, refused recipients and a busy moment (4xx and 5xx).
 */

/** A message the fake server accepted (250 after the DATA's final dot). */
export interface FakeSmtpMessage {
  from: string;
  to: string[];
  /** The message as sent after DATA (headers and body), dot-stuffing undone. */
  data: string;
}

/** A fake SMTP server, what it accepted, and the commands it was sent. */
export interface FakeSmtp {
  host: string;
  port: number;
  messages: FakeSmtpMessage[];
  /** Every command line received (AUTH arguments included), in order. */
  commands: string[];
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@linkcode startFakeSmtp}. */
export interface FakeSmtpOptions {
  /** The account AUTH must name; without one, AUTH is not offered and not required. */
  username?: string;
  password?: string;
  /** A reply to RCPT TO by recipient, e.g. `"550 5.1.1 No such user"` or `"451 4.3.0 Try again later"`. */
  recipientReplies?: Record<string, string>;
  /** A reply to the end of DATA by recipient (the message is then not accepted). */
  dataReplies?: Record<string, string>;
  /** Holds the reply to the end of DATA for messages to these recipients until it resolves. */
  holdAfterData?: (to: string) => Promise<void> | undefined;
}

const encoder = new TextEncoder();

/** Starts a fake SMTP server on a loopback port. */
export function startFakeSmtp(options: FakeSmtpOptions = {}): FakeSmtp {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const messages: FakeSmtpMessage[] = [];
  const commands: string[] = [];
  const connections = new Set<Deno.Conn>();
  const sessions: Promise<void>[] = [];
  (async () => {
    for await (const conn of listener) {
      connections.add(conn);
      sessions.push(serve(conn, options, messages, commands).catch(() => {}).finally(() => connections.delete(conn)));
    }
  })().catch(() => {});
  const close = async () => {
    try {
      listener.close();
    } catch {
      // Already closed.
    }
    for (const conn of connections) {
      try {
        conn.close();
      } catch {
        // Closed by the client.
      }
    }
    await Promise.allSettled(sessions);
  };
  return {
    host: "127.0.0.1",
    port: (listener.addr as Deno.NetAddr).port,
    messages,
    commands,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** One SMTP session, command by command. */
async function serve(conn: Deno.Conn, options: FakeSmtpOptions, messages: FakeSmtpMessage[], commands: string[]) {
  const lines = readLines(conn);
  const reply = (text: string) => conn.write(encoder.encode(`${text}\r\n`));
  const next = async () => (await lines.next()).value as string | undefined;
  const authRequired = options.username !== undefined;
  let authenticated = !authRequired;
  let from: string | undefined;
  let to: string[] = [];
  await reply("220 fake.smtp.test ESMTP ready");
  for (let line = await next(); line !== undefined; line = await next()) {
    commands.push(line);
    const verb = line.split(" ")[0].toUpperCase();
    if (verb === "EHLO") {
      await reply(
        ["250-fake.smtp.test greets you", ...(authRequired ? ["250-AUTH PLAIN LOGIN"] : []), "250 8BITMIME"].join(
          "\r\n",
        ),
      );
    } else if (verb === "HELO") {
      await reply("250 fake.smtp.test");
    } else if (verb === "AUTH") {
      const [, mechanism, initial] = line.split(" ");
      let user: string | undefined;
      let pass: string | undefined;
      if (mechanism?.toUpperCase() === "PLAIN") {
        let encoded = initial;
        if (!encoded) {
          await reply("334 ");
          encoded = await next() ?? "";
        }
        [, user, pass] = atob(encoded).split("\u0000");
      } else if (mechanism?.toUpperCase() === "LOGIN") {
        await reply("334 VXNlcm5hbWU6");
        user = atob(await next() ?? "");
        await reply("334 UGFzc3dvcmQ6");
        pass = atob(await next() ?? "");
      } else {
        await reply("504 5.5.4 Unrecognized authentication type");
        continue;
      }
      authenticated = user === options.username && pass === options.password;
      await reply(
        authenticated ? "235 2.7.0 Authentication successful" : "535 5.7.8 Authentication credentials invalid",
      );
    } else if (verb === "MAIL") {
      if (!authenticated) {
        await reply("530 5.7.0 Authentication required");
        continue;
      }
      from = line.match(/<([^>]*)>/)?.[1] ?? "";
      to = [];
      await reply("250 2.1.0 Sender OK");
    } else if (verb === "RCPT") {
      if (from === undefined) {
        await reply("503 5.5.1 Need MAIL before RCPT");
        continue;
      }
      const address = line.match(/<([^>]*)>/)?.[1] ?? "";
      const refusal = options.recipientReplies?.[address];
      if (refusal) {
        await reply(refusal);
        continue;
      }
      to.push(address);
      await reply("250 2.1.5 Recipient OK");
    } else if (verb === "DATA") {
      if (from === undefined || to.length === 0) {
        await reply("503 5.5.1 Need RCPT before DATA");
        continue;
      }
      await reply("354 Start mail input; end with <CRLF>.<CRLF>");
      const data: string[] = [];
      for (let part = await next(); part !== undefined && part !== "."; part = await next()) {
        data.push(part.startsWith("..") ? part.slice(1) : part);
      }
      await options.holdAfterData?.(to[0]);
      const refusal = to.map((address) => options.dataReplies?.[address]).find(Boolean);
      if (refusal) {
        await reply(refusal);
      } else {
        const id = crypto.randomUUID();
        messages.push({ from, to, data: data.join("\r\n") });
        await reply(`250 2.0.0 OK id=${id}`);
      }
      from = undefined;
      to = [];
    } else if (verb === "RSET") {
      from = undefined;
      to = [];
      await reply("250 2.0.0 OK");
    } else if (verb === "NOOP") {
      await reply("250 2.0.0 OK");
    } else if (verb === "QUIT") {
      await reply("221 2.0.0 Bye");
      break;
    } else {
      await reply("502 5.5.2 Command not recognized");
    }
  }
  conn.close();
}

/** The lines a connection sends (CRLF or LF ended), without their ends. */
async function* readLines(conn: Deno.Conn): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffered = "";
  const chunk = new Uint8Array(16_384);
  while (true) {
    let end: number;
    while ((end = buffered.indexOf("\n")) >= 0) {
      yield buffered.slice(0, end).replace(/\r$/, "");
      buffered = buffered.slice(end + 1);
    }
    const n = await conn.read(chunk);
    if (n === null) return;
    buffered += decoder.decode(chunk.subarray(0, n), { stream: true });
  }
}
