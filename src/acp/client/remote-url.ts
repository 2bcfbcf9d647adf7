/** The cookie a balancer can hash on to keep one client's connections on one instance (see docs/service.md, "Affinity"). */
export const AFFINITY_COOKIE = "acp_affinity";

/** True for the URL forms `AcpAgentConfig.url` takes (http, https, ws, wss). */
export function isAgentUrl(text: string): boolean {
  return /^(https?|wss?):\/\//i.test(text) && URL.canParse(text);
}
