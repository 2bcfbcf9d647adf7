import { lookup } from "node:dns/promises";
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import { isIP } from "node:net";
import { networkInterfaces } from "node:os";
import { ConfigError } from "./errors.js";
import { isNonPublicAddress } from "./network.js";

/**
 * The sandbox's network allow-list (`--sandbox-net allow=HOST[:PORT],…`, docs/sandbox.md): which
 * destinations the proxy outside the sandbox (sandbox-proxy.ts) connects a command to. Decided by
 * the name the command asked for and its port; the proxy resolves the name itself, so the
 * command's DNS cannot choose the address.
 */
export interface NetAllowEntry {
  /** Lower-case host name, IP address (IPv6 without brackets), or `*.suffix` for any sub-domain. */
  host: string;
  /** Any port when absent. */
  port?: number;
}

/** `allow=a.example,b.example:443` (repeatable; `allow=` with nothing = no network) → entries. */
export function parseNetAllow(values: readonly string[]): NetAllowEntry[] {
  const entries: NetAllowEntry[] = [];
  for (const value of values) {
    const match = /^allow=(.*)$/.exec(value);
    if (!match) throw new ConfigError(`--sandbox-net takes allow=HOST[:PORT][,HOST[:PORT]…] (got "${value}")`);
    for (const item of (match[1] ?? "").split(",")) {
      if (item.trim() === "") continue;
      const entry = parseEntry(item.trim());
      if (!entry) throw new ConfigError(`--sandbox-net: "${item}" is not HOST[:PORT] (a host name, *.domain, an IPv4 address or [IPv6], and a port 1-65535)`);
      entries.push(entry);
    }
  }
  return entries;
}

function parseEntry(item: string): NetAllowEntry | undefined {
  const bracketed = /^\[([0-9a-fA-F:.]+)\](?::(\d+))?$/.exec(item);
  const plain = /^([^:[\]]+)(?::(\d+))?$/.exec(item);
  const bare6 = isIP(item) === 6 ? [item, item, undefined] : undefined;
  const [, rawHost, rawPort] = bracketed ?? bare6 ?? plain ?? [];
  if (rawHost === undefined) return undefined;
  const host = normalHost(rawHost);
  const name = host.startsWith("*.") ? host.slice(2) : host;
  if (isIP(name) === 0 && !/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(name)) return undefined;
  if (host.startsWith("*.") && isIP(name) !== 0) return undefined;
  if (rawPort === undefined) return { host };
  const port = Number(rawPort);
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? { host, port } : undefined;
}

function normalHost(host: string): string {
  return host.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "").toLowerCase();
}

/** `host[:port]` as written on the command line (IPv6 in brackets). */
export function formatNetAllow(entry: NetAllowEntry): string {
  const host = isIP(entry.host) === 6 ? `[${entry.host}]` : entry.host;
  return entry.port === undefined ? host : `${host}:${entry.port}`;
}

export type NetVerdict = { ok: true; address: string } | { ok: false; reason: string };

export interface NetDecisionOptions {
  /** Ports this process listens on (default: read from /proc): never reachable on a local address. */
  ownPorts?: () => ReadonlySet<number>;
  /** Name lookup (default: the system resolver, all addresses). */
  resolve?: (host: string) => Promise<string[]>;
}

/**
 * Whether a command may connect to `host:port`, and at which address. Refused: a destination no
 * entry names; a name that resolves to a loopback, private or link-local address unless the
 * entry names that address (or `localhost`) itself — so a wildcard or a public name re-pointed
 * at 127.0.0.1 (DNS rebinding) cannot reach the machine's own services; and this process's
 * own listeners on any local address, even when named.
 */
export async function decideDestination(allow: readonly NetAllowEntry[], rawHost: string, port: number, options: NetDecisionOptions = {}): Promise<NetVerdict> {
  const host = normalHost(rawHost);
  const entry = allow.find((e) => hostMatches(e.host, host) && (e.port === undefined || e.port === port));
  if (!entry) return { ok: false, reason: "not in the --sandbox-net allow-list" };
  let addresses: string[];
  try {
    addresses = isIP(host) !== 0 ? [host] : await (options.resolve ?? resolveAll)(host);
  } catch {
    addresses = [];
  }
  if (addresses.length === 0) return { ok: false, reason: `${host} does not resolve` };
  const namesPrivate = !entry.host.startsWith("*.") && (isIP(entry.host) !== 0 || entry.host === "localhost");
  const hidden = addresses.find((address) => isNonPublicAddress(address));
  if (hidden !== undefined && !namesPrivate) return { ok: false, reason: `${host} resolves to ${hidden}, a loopback or private address: only an address (or localhost) named in the allow-list reaches those` };
  const own = (options.ownPorts ?? listeningPorts)();
  if (own.has(port) && addresses.some((address) => isLocalAddress(address))) return { ok: false, reason: `port ${port} here is this server's own listener, never reachable from the sandbox` };
  return { ok: true, address: addresses[0] ?? host };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern.startsWith("*.")) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern === host;
}

async function resolveAll(host: string): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("timeout")), 5_000);
  });
  try {
    return (await Promise.race([lookup(host, { all: true, verbatim: true }), timeout])).map((found) => found.address);
  } finally {
    clearTimeout(timer);
  }
}

/** An address of this machine: loopback, unspecified, or one of its interfaces'. */
function isLocalAddress(address: string): boolean {
  if (/^(127\.|0\.0\.0\.0$|::1?$|::ffff:127\.)/.test(address)) return true;
  return Object.values(networkInterfaces()).some((list) => (list ?? []).some((nic) => nic.address === address));
}

/** TCP ports this process listens on (its socket inodes matched in /proc/net/tcp{,6}); empty where /proc is not. */
export function listeningPorts(): Set<number> {
  const inodes = new Set<string>();
  const ports = new Set<number>();
  try {
    for (const fd of readdirSync("/proc/self/fd")) {
      try {
        const match = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
        if (match?.[1]) inodes.add(match[1]);
      } catch {
        // closed meanwhile
      }
    }
    for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
      for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
        const fields = line.trim().split(/\s+/);
        // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth field.
        if (fields[3] === "0A" && fields[9] !== undefined && inodes.has(fields[9])) ports.add(parseInt(fields[1]?.split(":")[1] ?? "", 16));
      }
    }
  } catch {
    // no /proc (macOS): no listeners known
  }
  return ports;
}

/** For logs and `prompt`'s line: "none", or the destinations allowed. */
export function netAllowText(allow: readonly NetAllowEntry[]): string {
  return allow.length > 0 ? `only ${allow.map(formatNetAllow).join(", ")} (through the sandbox's proxy)` : "none";
}
