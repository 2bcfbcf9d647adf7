import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";

/**
 * Addresses a server must not be made to reach on a client's behalf: loopback, RFC 1918 and
 * CGNAT (100.64/10) private ranges, link-local, unique-local, unspecified, multicast, reserved.
 */
const nonPublic = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network", unspecified
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // CGNAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local (cloud metadata services live here)
  ["172.16.0.0", 12],
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["100::", 64], // discard
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local (deprecated)
  ["ff00::", 8], // multicast
] as const) {
  nonPublic.addSubnet(net, prefix, "ipv6");
}

/** The IPv4 address an IPv6 one carries (mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const words = expandIpv6(lower);
  if (!words) return undefined;
  const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  if (words.slice(0, 5).every((w) => w === 0) && words[5] === 0xffff) return v4(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && words.slice(2, 6).every((w) => w === 0)) return v4(words[6]!, words[7]!);
  if (words[0] === 0x2002) return v4(words[1]!, words[2]!);
  return undefined;
}

function expandIpv6(address: string): number[] | undefined {
  if (address.includes(".")) return undefined;
  const [head, tail] = address.split("::");
  const part = (s: string | undefined): number[] => (s ? s.split(":").map((w) => parseInt(w, 16)) : []);
  const left = part(head);
  const right = part(tail);
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  const words = [...left, ...new Array<number>(Math.max(fill, 0)).fill(0), ...right];
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

/** True for an IP address that is not on the public internet (see `nonPublic`); false for a public one or a non-address. */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return nonPublic.check(address, "ipv4");
  if (family !== 6) return false;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return nonPublic.check(v4, "ipv4");
  return nonPublic.check(address, "ipv6");
}

/**
 * Whether a URL's host is, or resolves to, a non-public address: the name is resolved here
 * (`dns.lookup`, all addresses, as a connection would) and ANY non-public address counts.
 * `"unresolved"` when the name did not resolve within `timeoutMs` (the connection would fail
 * or be checked again). A URL with a literal address needs no lookup.
 */
export async function urlHostReach(url: string, timeoutMs = 5_000): Promise<"public" | "non-public" | "unresolved"> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host) !== 0) return isNonPublicAddress(host) ? "non-public" : "public";
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
    timer.unref();
  });
  try {
    const found = await Promise.race([lookup(host, { all: true, verbatim: true }).catch(() => undefined), timeout]);
    if (found === undefined || found.length === 0) return "unresolved";
    return found.some((entry) => isNonPublicAddress(entry.address)) ? "non-public" : "public";
  } finally {
    clearTimeout(timer);
  }
}
