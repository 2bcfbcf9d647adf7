import type { IncomingMessage } from "node:http";

/**
 * Checks for a page this process serves to the browser on this machine (the key page, the
 * inspect page), against other web sites the same browser has open.
 *
 * DNS rebinding: a site whose name is re-pointed at 127.0.0.1 gets the browser to send its
 * requests here as same-origin, but with that name as `Host`; names cannot be told apart, so
 * only an IP address (or `localhost`, which browsers resolve themselves) with our port passes.
 */
export function hostAllowed(host: string | undefined, port: number): boolean {
  const m = /^(localhost|\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\]):(\d{1,5})$/i.exec(host ?? "");
  return m !== null && Number(m[2]) === port;
}

/** Cross-site requests: a browser names the page that sent a POST in `Origin`; when present it must be the page's own. */
export function sameOrigin(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ""}`;
}
