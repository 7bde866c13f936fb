/**
 * Guards outbound webhook URLs against server-side request forgery: only http(s) to public
 * addresses. A name is resolved (A and AAAA) and refused when any address it has is private,
 * loopback, link-local or otherwise not globally routable.
 */

/** Resolves a host name to addresses of one record type (Deno.resolveDns by default). */
export type Resolver = (host: string, type: "A" | "AAAA") => Promise<string[]>;

/** Options of {@linkcode urlRefusal}. */
export interface UrlCheckOptions {
  /** Allow private, loopback and link-local targets (tests, WEBHOOK_ALLOW_PRIVATE=1). */
  allowPrivate?: boolean;
  resolve?: Resolver;
}

type Range = [base: bigint, prefix: number, reason: string];

function v4(text: string, prefix: number, reason: string): Range {
  return [parseIpv4(text)!, prefix, reason];
}

function v6(text: string, prefix: number, reason: string): Range {
  return [parseIpv6(text)!, prefix, reason];
}

const IPV4_BLOCKED: Range[] = [
  v4("0.0.0.0", 8, "an unspecified address"),
  v4("10.0.0.0", 8, "a private address"),
  v4("100.64.0.0", 10, "a private address"),
  v4("127.0.0.0", 8, "a loopback address"),
  v4("169.254.0.0", 16, "a link-local address"),
  v4("172.16.0.0", 12, "a private address"),
  v4("192.0.0.0", 24, "a reserved address"),
  v4("192.0.2.0", 24, "a reserved address"),
  v4("192.168.0.0", 16, "a private address"),
  v4("198.18.0.0", 15, "a reserved address"),
  v4("198.51.100.0", 24, "a reserved address"),
  v4("203.0.113.0", 24, "a reserved address"),
  v4("224.0.0.0", 4, "a multicast address"),
  v4("240.0.0.0", 4, "a reserved address"),
];

const IPV6_BLOCKED: Range[] = [
  v6("::", 128, "an unspecified address"),
  v6("::1", 128, "a loopback address"),
  v6("100::", 64, "a reserved address"),
  v6("2001:db8::", 32, "a reserved address"),
  v6("fc00::", 7, "a private address"),
  v6("fe80::", 10, "a link-local address"),
  v6("fec0::", 10, "a private address"),
  v6("ff00::", 8, "a multicast address"),
];

/** IPv6 prefixes that carry an IPv4 address, which is checked in turn: [base, prefix, bit offset of the IPv4]. */
const IPV6_EMBEDDING: [bigint, number, number][] = [
  [parseIpv6("::ffff:0:0")!, 96, 0], // IPv4-mapped
  [parseIpv6("::")!, 96, 0], // IPv4-compatible (deprecated)
  [parseIpv6("64:ff9b::")!, 96, 0], // NAT64
  [parseIpv6("2002::")!, 16, 80], // 6to4
];

/** The address as a 32-bit number, or undefined when `text` is not dotted-quad IPv4. */
export function parseIpv4(text: string): bigint | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n);
}

/** The address as a 128-bit number, or undefined when `text` is not IPv6 (brackets and zone allowed). */
export function parseIpv6(text: string): bigint | undefined {
  let s = text.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (!s.includes(":")) return undefined;
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(s);
  if (tail) {
    const four = parseIpv4(tail[1]);
    if (four === undefined) return undefined;
    s = s.slice(0, -tail[1].length) + `${(four >> 16n).toString(16)}:${(four & 0xffffn).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - rest.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...rest];
  if (groups.some((g) => !/^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  return groups.reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function inRange(value: bigint, bits: number, [base, prefix]: [bigint, number, ...unknown[]]): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

/**
 * Why an IP address may not be a webhook target ('a loopback address' …), or undefined when it is a
 * public address (or not an IP address at all).
 */
export function addressRefusal(address: string): string | undefined {
  const four = parseIpv4(address);
  if (four !== undefined) return IPV4_BLOCKED.find((r) => inRange(four, 32, r))?.[2];
  const six = parseIpv6(address);
  if (six === undefined) return undefined;
  for (const [base, prefix, offset] of IPV6_EMBEDDING) {
    if (six !== 0n && six !== 1n && inRange(six, 128, [base, prefix])) {
      const embedded = (six >> BigInt(offset)) & 0xffffffffn;
      const text = [24n, 16n, 8n, 0n].map((s) => String((embedded >> s) & 0xffn)).join(".");
      return addressRefusal(text);
    }
  }
  return IPV6_BLOCKED.find((r) => inRange(six, 128, r))?.[2];
}

const defaultResolver: Resolver = (host, type) =>
  Deno.resolveDns(host, type, { signal: AbortSignal.timeout(5_000) }) as Promise<string[]>;

/**
 * Why `url` may not be a webhook target, or undefined when it may. Checked when an endpoint is
 * registered and again before every delivery (DNS answers change).
 */
export async function urlRefusal(url: string, options: UrlCheckOptions = {}): Promise<string | undefined> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "url must be a valid URL";
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") return "url must use http or https";
  if (parsed.username || parsed.password) return "url must not carry credentials";
  if (options.allowPrivate) return undefined;
  // The URL parser has already normalised IPv4 forms such as 0x7f.1 or 2130706433 to dotted quads.
  const host = parsed.hostname.replace(/\.$/, "").toLowerCase();
  const refusal = (reason: string) => `url must not point to ${reason}`;
  if (host.startsWith("[") || parseIpv4(host) !== undefined) {
    const reason = addressRefusal(host);
    return reason ? refusal(reason) : undefined;
  }
  // Names resolved by the system's search list or hosts file never reach a public DNS answer.
  if (host === "localhost" || host.endsWith(".localhost") || !host.includes(".")) {
    return refusal("a loopback or local address");
  }
  const resolve = options.resolve ?? defaultResolver;
  const answers = await Promise.allSettled([resolve(host, "A"), resolve(host, "AAAA")]);
  const addresses = answers.flatMap((a) => a.status === "fulfilled" ? a.value : []);
  if (addresses.length === 0) return "url host cannot be resolved";
  for (const address of addresses) {
    const reason = addressRefusal(address);
    if (reason) return refusal(reason);
  }
  return undefined;
}
