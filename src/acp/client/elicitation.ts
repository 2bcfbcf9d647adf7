import * as acp from "@agentclientprotocol/sdk/unstable";
import type { AcpElicitationHandler, AcpUrlElicitation, AcpUrlElicitationHandler } from "./config.js";
import { isHttpUrl } from "../../core/urls.js";

/** URL elicitations whose `elicitation/complete` is still awaited, at most this many (oldest dropped). */
const MAX_OPEN_URL_ELICITATIONS = 64;

/**
 * Serves the agent's `elicitation/create` (form and/or URL mode, each only when its handler is
 * set) and `elicitation/complete`; returns the `elicitation` client capability to advertise
 * (undefined: none). Requests for an unknown session answer -32002; an unsupported mode -32602.
 */
export function registerElicitation(
  app: acp.ClientApp,
  handlers: { form?: AcpElicitationHandler | undefined; url?: AcpUrlElicitationHandler | undefined },
  hasSession: (sessionId: string) => boolean,
): acp.ElicitationCapabilities | undefined {
  const { form, url } = handlers;
  if (!form && !url) return undefined;
  const open = new Map<string, () => void>();
  app.onRequest(acp.methods.client.elicitation.create, async ({ params, signal }) => {
    if ("sessionId" in params && typeof params.sessionId === "string" && !hasSession(params.sessionId)) throw acp.RequestError.sessionNotFound(params.sessionId);
    if (params.mode === "form" && form) return form(params, signal);
    if (params.mode === "url" && url) return url(urlElicitation(params, signal, open));
    const supported = [form ? "form" : undefined, url ? "url" : undefined].filter(Boolean).join(", ");
    throw acp.RequestError.invalidParams({ mode: params.mode }, `elicitation mode "${params.mode}" is not supported by this client (supported: ${supported})`);
  });
  // The spec: unknown or already completed ids are ignored.
  app.onNotification(acp.methods.client.elicitation.complete, ({ params }) => {
    open.get(params.elicitationId)?.();
    open.delete(params.elicitationId);
  });
  return { ...(form ? { form: {} } : {}), ...(url ? { url: {} } : {}) };
}

function urlElicitation(params: acp.CreateElicitationRequest, signal: AbortSignal, open: Map<string, () => void>): AcpUrlElicitation {
  const { url, elicitationId } = params as { url?: unknown; elicitationId?: unknown };
  if (typeof elicitationId !== "string" || elicitationId === "") throw acp.RequestError.invalidParams({ elicitationId }, "a URL elicitation needs an elicitationId");
  if (typeof url !== "string" || !isHttpUrl(url)) throw acp.RequestError.invalidParams({ url }, "a URL elicitation needs an http:// or https:// url");
  let done: () => void = () => undefined;
  const completed = new Promise<void>((resolve) => (done = resolve));
  if (open.size >= MAX_OPEN_URL_ELICITATIONS) open.delete(open.keys().next().value as string);
  open.set(elicitationId, done);
  return { request: { ...params, mode: "url", url, elicitationId }, signal, completed };
}
