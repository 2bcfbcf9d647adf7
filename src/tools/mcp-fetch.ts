import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import { Readable } from "node:stream";
import { isNonPublicAddress } from "../core/index.js";

/** The error of a connection refused because its address is not public. */
export class NonPublicAddressError extends Error {
  readonly code = "EADDRNOTPUBLIC";
  constructor(host: string) {
    super(`${host} is not a public address`);
    this.name = "NonPublicAddressError";
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;
type Fetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A `fetch` whose connections never reach an address `refuse` names: a literal address is
 * checked as it is; a name is resolved at each connection, every address it resolves to is
 * checked, and the socket connects to one of those (pinned: no second lookup for a rebinding
 * name to answer differently). Own keep-alive agents, so a pooled socket made elsewhere without
 * the check is never reused. Redirects are returned, not followed (the MCP SDK follows
 * same-origin ones through this fetch again). Request bodies: strings or bytes (what the MCP SDK sends).
 */
export function addressGuardedFetch(refuse: (address: string) => boolean): Fetch {
  const lookup = (hostname: string, options: LookupOptions | number | undefined, callback: LookupCallback): void => {
    const family = typeof options === "number" ? options : options?.family === "IPv4" ? 4 : options?.family === "IPv6" ? 6 : (options?.family ?? 0);
    const all = typeof options === "object" && options.all === true;
    dnsLookup(hostname, { family: family as 0 | 4 | 6, all: true }, (error, addresses) => {
      if (error) return callback(error, all ? [] : "");
      if (addresses.length === 0 || addresses.some((a) => refuse(a.address))) return callback(new NonPublicAddressError(hostname), all ? [] : "");
      if (all) return callback(null, addresses);
      callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
  const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };
  return async (input, init = {}) => {
    const url = new URL(input);
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    if (isIP(host) !== 0 && refuse(host)) throw new TypeError("fetch failed", { cause: new NonPublicAddressError(host) });
    const body = init.body;
    if (body != null && typeof body !== "string" && !(body instanceof Uint8Array)) throw new TypeError("addressGuardedFetch sends string or byte bodies only");
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => (headers[key] = value));
    const https = url.protocol === "https:";
    return new Promise<Response>((resolve, reject) => {
      const options = { method: init.method ?? "GET", headers, agent: https ? agents.https : agents.http, lookup, ...(init.signal ? { signal: init.signal } : {}) };
      const req = (https ? httpsRequest : httpRequest)(url, options, (res: IncomingMessage) => {
        try {
          resolve(toResponse(res));
        } catch (error) {
          res.destroy();
          reject(new TypeError("fetch failed", { cause: error }));
        }
      });
      req.on("error", (error) => reject(new TypeError("fetch failed", { cause: error })));
      req.end(body ?? undefined);
    });
  };
}

let publicOnly: Fetch | undefined;

/** `addressGuardedFetch` refusing every non-public address (`isNonPublicAddress`); one per process. */
export function publicOnlyFetch(input: string | URL, init?: RequestInit): Promise<Response> {
  publicOnly ??= addressGuardedFetch(isNonPublicAddress);
  return publicOnly(input, init);
}

function toResponse(res: IncomingMessage): Response {
  const headers = new Headers();
  for (const [key, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(key, v);
  }
  const status = res.statusCode ?? 502;
  const empty = status === 204 || status === 205 || status === 304;
  if (empty) res.resume();
  return new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage ?? "", headers });
}
