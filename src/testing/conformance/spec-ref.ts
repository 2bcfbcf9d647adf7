import type { SpecReference } from "./types.js";

const ACP = "https://agentclientprotocol.com/protocol/v1";

/** A sentence of the ACP v1 docs (docs/protocol/v1/<page>.mdx in the spec repository), quoted verbatim. */
export function acp(section: string, text: string, rating?: string): SpecReference {
  return { section, url: `${ACP}/${section}`, text, ...(rating !== undefined ? { rating } : {}) };
}

/** A sentence of the ACP v2 draft docs (docs/protocol/v2/draft/<page>.mdx), quoted verbatim: v2 is a draft and may change. */
export function acpV2Draft(section: string, text: string, rating?: string): SpecReference {
  return { section: `v2/draft/${section}`, url: `https://agentclientprotocol.com/protocol/v2/draft/${section}`, text, ...(rating !== undefined ? { rating } : {}) };
}

/** A sentence of the JSON-RPC 2.0 specification, quoted verbatim. */
export function jsonRpc(anchor: string, text: string, rating?: string): SpecReference {
  return { section: `jsonrpc#${anchor}`, url: `https://www.jsonrpc.org/specification#${anchor}`, text, ...(rating !== undefined ? { rating } : {}) };
}

/** Advertising a capability is the claim that backs the MUST of a capability check. */
export const ADVERTISED =
  "The method or content type is advertised in initialize, and \"The Agent **MUST** respond with the chosen [protocol version](#protocol-version) and the [capabilities](#agent-capabilities) it supports.\" (initialization): an agent that advertises it and does otherwise does not implement it.";

const SCHEMA = "https://github.com/agentclientprotocol/agent-client-protocol/blob/main/schema";

/**
 * A sentence of a type's description in the ACP v1 JSON schema (as shipped in
 * @agentclientprotocol/sdk's schema/v1/), quoted verbatim: the unstable methods have no docs page yet.
 */
export function acpSchema(file: "schema.json" | "schema.unstable.json", type: string, text: string, rating?: string): SpecReference {
  return { section: `${file}#${type}`, url: `${SCHEMA}/${file}`, text, ...(rating !== undefined ? { rating } : {}) };
}
