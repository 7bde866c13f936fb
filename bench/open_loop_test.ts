import assert from "node:assert/strict";
import { dueAt, type GeneratorTick, ResponseParser, runOpenLoop } from "./open_loop.ts";

const encoder = new TextEncoder();

Deno.test("ResponseParser splits pipelined answers, across chunk boundaries, in order", () => {
  const stream = encoder.encode(
    "HTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\n{}" +
      "HTTP/1.1 429 Too Many Requests\r\nContent-Length: 0\r\n\r\n" +
      "HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhello",
  );
  const statuses: number[] = [];
  const parser = new ResponseParser();
  // Byte by byte: every split point of headers and bodies is met.
  for (let i = 0; i < stream.length; i++) parser.push(stream.subarray(i, i + 1), (s) => statuses.push(s));
  assert.deepEqual(statuses, [201, 429, 200]);
});

Deno.test("ResponseParser refuses a chunked answer rather than misreading the stream", () => {
  const parser = new ResponseParser();
  assert.throws(
    () => parser.push(encoder.encode("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"), () => {}),
    /chunked/,
  );
});

Deno.test("dueAt spaces requests evenly at the rate, from the start", () => {
  assert.equal(dueAt(1000, 4000, 0), 1000);
  assert.equal(dueAt(1000, 4000, 4000), 2000);
  assert.equal(dueAt(1000, 4000, 2), 1000.5);
});

Deno.test("runOpenLoop sends every scheduled request once, numbered and stamped with its due time", async () => {
  const received: { seq: number; at: number }[] = [];
  let slow = true;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const body = await req.json();
    // Zero-padded to seven digits (a phone number's tail).
    assert.equal(body.seq.length, 7);
    received.push({ seq: Number(body.seq), at: Number(body.at) });
    // The first answer is held back: an open-loop generator keeps sending on its other connections.
    if (slow) {
      slow = false;
      await new Promise((r) => setTimeout(r, 200));
    }
    return Number(body.seq) % 10 === 9
      ? new Response("busy", { status: 503 })
      : Response.json({ ok: true }, { status: 201 });
  });
  const ticks: GeneratorTick[] = [];
  try {
    const result = await runOpenLoop({
      url: `http://127.0.0.1:${server.addr.port}`,
      method: "POST",
      path: "/send",
      headers: { "x-api-key": "k" },
      bodyTemplate: '{"seq":"%SEQ%","at":"%AT%"}',
      rate: 400,
      durationSec: 0.5,
      connections: 4,
      firstSeq: 100,
    }, (t) => ticks.push(t));
    assert.equal(result.sent, 200);
    assert.equal(result.unanswered, 0);
    assert.deepEqual(result.statuses, { 201: 180, 503: 20 });
    assert.equal(result.ok, 180);
    assert.deepEqual(received.map((r) => r.seq).sort((a, b) => a - b), Array.from({ length: 200 }, (_, i) => 100 + i));
    // Each body carries its own due time: the schedule, 2.5 ms apart at 400/s.
    const bySeq = new Map(received.map((r) => [r.seq, r.at]));
    assert.equal(Math.round((bySeq.get(299)! - bySeq.get(100)!) * 10) / 10, 199 * 2.5);
    assert.equal(ticks.at(-1)!.ok, 180);
    assert.ok(result.p99Ms >= result.p50Ms);
  } finally {
    await server.shutdown();
  }
});
