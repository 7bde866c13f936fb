import assert from "node:assert/strict";
import { addressRefusal, parseIpv6, type Resolver, urlRefusal } from "./ssrf.ts";

/** A resolver that answers from a table (tests never query real DNS). */
function fakeDns(table: Record<string, { A?: string[]; AAAA?: string[] }>): Resolver {
  return (host, type) => {
    const answer = table[host]?.[type];
    return answer ? Promise.resolve(answer) : Promise.reject(new Deno.errors.NotFound(host));
  };
}

Deno.test("addressRefusal() refuses private, loopback, link-local and reserved IPv4 and IPv6 addresses", () => {
  const refused: [string, RegExp][] = [
    ["127.0.0.1", /loopback/],
    ["127.255.0.9", /loopback/],
    ["10.1.2.3", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["100.64.0.1", /private/],
    ["169.254.169.254", /link-local/],
    ["0.0.0.0", /unspecified/],
    ["224.0.0.1", /multicast/],
    ["255.255.255.255", /reserved/],
    ["::1", /loopback/],
    ["::", /unspecified/],
    ["fe80::1", /link-local/],
    ["fd00::1", /private/],
    ["ff02::1", /multicast/],
    ["::ffff:127.0.0.1", /loopback/],
    ["::ffff:7f00:1", /loopback/],
    ["::ffff:a9fe:a9fe", /link-local/],
    ["64:ff9b::10.0.0.1", /private/],
    ["2002:c0a8:0101::1", /private/],
    ["[::1]", /loopback/],
  ];
  for (const [address, reason] of refused) assert.match(addressRefusal(address) ?? "allowed", reason, address);
});

Deno.test("addressRefusal() allows public addresses", () => {
  for (
    const address of ["8.8.8.8", "172.32.0.1", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "2002:0808:0808::1"]
  ) {
    assert.equal(addressRefusal(address), undefined, address);
  }
});

Deno.test("parseIpv6() expands :: and embedded IPv4, and rejects malformed text", () => {
  assert.equal(parseIpv6("::1"), 1n);
  assert.equal(parseIpv6("1::"), 1n << 112n);
  assert.equal(parseIpv6("::ffff:1.2.3.4"), (0xffffn << 32n) | 0x01020304n);
  for (const bad of ["1:2:3", "1::2::3", "12345::", "g::1", "1:2:3:4:5:6:7:8:9"]) {
    assert.equal(parseIpv6(bad), undefined, bad);
  }
});

Deno.test("urlRefusal() refuses literal private IPs in every spelling the URL parser accepts", async () => {
  for (
    const url of [
      "http://127.0.0.1/x",
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::1]:8080/",
      "https://10.0.0.5",
    ]
  ) {
    assert.match(await urlRefusal(url) ?? "allowed", /must not point to/, url);
  }
});

Deno.test("urlRefusal() refuses localhost, single-label names and names that resolve to private addresses", async () => {
  const resolve = fakeDns({
    "internal.example.com": { A: ["10.0.0.7"] },
    "mixed.example.com": { A: ["93.184.216.34"], AAAA: ["::1"] },
    "metadata.example.com": { A: ["169.254.169.254"] },
  });
  assert.match(await urlRefusal("http://localhost:8000/", { resolve }) ?? "", /loopback/);
  assert.match(await urlRefusal("http://api.localhost/", { resolve }) ?? "", /loopback/);
  assert.match(await urlRefusal("http://intranet/", { resolve }) ?? "", /local/);
  assert.match(await urlRefusal("https://internal.example.com/hook", { resolve }) ?? "", /private/);
  assert.match(await urlRefusal("https://mixed.example.com/hook", { resolve }) ?? "", /loopback/);
  assert.match(await urlRefusal("https://metadata.example.com/", { resolve }) ?? "", /link-local/);
  assert.equal(await urlRefusal("https://nowhere.example.com/", { resolve }), "url host cannot be resolved");
});

Deno.test("urlRefusal() allows a name with only public addresses, and anything when private targets are allowed", async () => {
  const resolve = fakeDns({ "hooks.example.com": { A: ["93.184.216.34"], AAAA: ["2606:2800:220:1::1"] } });
  assert.equal(await urlRefusal("https://hooks.example.com/in", { resolve }), undefined);
  assert.equal(await urlRefusal("http://127.0.0.1:9/", { allowPrivate: true }), undefined);
});

Deno.test("urlRefusal() refuses other schemes and credentials even when private targets are allowed", async () => {
  assert.equal(await urlRefusal("ftp://example.com/", { allowPrivate: true }), "url must use http or https");
  assert.equal(await urlRefusal("file:///etc/passwd", { allowPrivate: true }), "url must use http or https");
  assert.equal(await urlRefusal("https://u:p@example.com/", { allowPrivate: true }), "url must not carry credentials");
  assert.equal(await urlRefusal("not a url"), "url must be a valid URL");
});
