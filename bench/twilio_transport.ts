/**
 * CPU a message of the Twilio provider (the SDK over fetch, shared/providers/twilio_http.ts) against a
 * bare `fetch` of the same form, 16 in flight, to the fake Twilio in a child process, so that only
 * the sending side is counted. `deno run -A bench/twilio_transport.ts [messages]` prints a row each.
 */
import { startFakeTwilio } from "../harness/fakes/fake_servers.ts";
import { createTwilioProvider } from "../shared/providers/twilio.ts";
import type { OutboundMessage } from "../shared/providers/types.ts";

const credentials = { accountSid: `AC${"b".repeat(32)}`, authToken: "t".repeat(32) };
const IN_FLIGHT = 16;

if (Deno.args[0] === "--fake") {
  const fake = startFakeTwilio(credentials);
  setInterval(() => fake.messages.splice(0), 1_000);
  console.log(fake.url);
} else {
  const count = Number(Deno.args[0] ?? 3_000);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", import.meta.filename!, "--fake"],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const url = (await reader.read()).value!.trim();
  const provider = createTwilioProvider({ ...credentials, baseUrl: url });
  const message = (i: number): OutboundMessage => ({
    id: `m${i}`,
    teamId: "bench",
    channel: "sms",
    to: "+15005550006",
    from: "+15005550001",
    text: `Message ${i}`,
  });
  const authorization = `Basic ${btoa(`${credentials.accountSid}:${credentials.authToken}`)}`;
  const bare = async (i: number) => {
    const response = await fetch(`${url}/2010-04-01/Accounts/${credentials.accountSid}/Messages.json`, {
      method: "POST",
      headers: { authorization, "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ To: "+15005550006", From: "+15005550001", Body: `Message ${i}` }),
    });
    if (!(await response.json()).sid) throw new Error("no sid");
  };
  const sdk = async (i: number) => void await provider.send(message(i));
  for (
    const [name, send] of [["the provider (SDK over fetch)", sdk], ["a bare fetch", bare], [
      "the provider (SDK over fetch)",
      sdk,
    ], ["a bare fetch", bare]] as const
  ) {
    for (let i = 0; i < 200; i++) await send(i);
    const before = process.cpuUsage();
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < count) await send(next++);
    }));
    const cpu = process.cpuUsage(before);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${name}: ${Math.round((cpu.user + cpu.system) / count)} µs CPU a message, ${Math.round(count / seconds)}/s`,
    );
  }
  child.kill();
  await child.status;
}
