import type { Item, Part } from "../core/index.js";
import type { SessionHeader, SessionHeaderPatch, SessionReader } from "../store/index.js";
import { headerLine, headerUpdateLine, itemLine } from "../store/records.js";
import { stripControls } from "./terminal-safe.js";

export type ExportFormat = "jsonl" | "markdown";

/**
 * Writes a session as it is read (one item in memory at a time). JSONL is the session file
 * format: the header as created, one item record per item with its append time, and the
 * header's later changes as one update record — a file another state directory's store reads
 * as this very session. Markdown is for people.
 */
export async function exportSession(reader: SessionReader, format: ExportFormat, out: (text: string) => void): Promise<void> {
  if (format === "jsonl") {
    out(headerLine(reader.created));
    let lastAt = reader.created.updatedAt;
    for await (const { item, at } of reader.items()) {
      out(itemLine(item, at));
      lastAt = at;
    }
    // Header changes met on the way (title, archive, mode …) go last as one update record.
    const final = reader.result().header;
    if (JSON.stringify(mutable(final)) !== JSON.stringify(mutable({ ...reader.created, updatedAt: lastAt }))) out(headerUpdateLine(mutable(final), final.updatedAt));
    return;
  }
  out(`# ${stripControls(reader.created.title ?? reader.created.sessionId)}\n\n`);
  for await (const { item, at } of reader.items()) out(markdownItem(item, at));
  out(markdownHeader(reader.result().header));
}

/** The header fields a `header_update` record sets (absolute values, so the record replays exactly). */
function mutable(header: SessionHeader): SessionHeaderPatch {
  return {
    title: header.title ?? null,
    archived: header.archived === true,
    cwd: header.cwd,
    additionalDirectories: header.additionalDirectories,
    metadata: header.metadata,
    updatedAt: header.updatedAt,
  };
}

function markdownHeader(header: SessionHeader): string {
  const rows: Array<[string, string | undefined]> = [
    ["session", header.sessionId],
    ["title", header.title],
    ["owner", header.owner],
    ["cwd", header.cwd],
    ["created", header.createdAt],
    ["updated", header.updatedAt],
    ["archived", header.archived ? "yes" : undefined],
    ["forked from", header.forkedFrom],
  ];
  return `---\n\n${rows
    .filter((r): r is [string, string] => r[1] !== undefined)
    .map(([k, v]) => `- ${k}: ${stripControls(v)}`)
    .join("\n")}\n`;
}

const ROLE_TITLE: Record<Item["role"], string> = { user: "User", assistant: "Assistant", tool: "Tool results", system: "System" };

function markdownItem(item: Item, at: string): string {
  const parts = item.parts.map(markdownPart).filter((p) => p.length > 0);
  return `## ${ROLE_TITLE[item.role] ?? item.role} · ${at}\n\n${parts.join("\n\n")}\n\n`;
}

/** A fence longer than any backtick run in the text, so the text cannot close it. */
function fenced(text: string, lang = ""): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((r) => r.length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${stripControls(text)}\n${fence}`;
}

function markdownPart(part: Part): string {
  switch (part.type) {
    case "text":
      return stripControls(part.text);
    case "reasoning":
      return part.text ? `> *thinking:* ${stripControls(part.text).replace(/\n/g, "\n> ")}` : "";
    case "tool_call":
      return `**${stripControls(part.toolName)}** call \`${stripControls(part.callId)}\`\n\n${fenced(JSON.stringify(part.input, null, 2) ?? "null", "json")}`;
    case "tool_result":
      return `**${stripControls(part.toolName)}** ${part.result.isError ? "failed" : "result"} \`${stripControls(part.callId)}\`\n\n${fenced(part.result.text)}`;
    case "resource_link":
      return `[${stripControls(part.title ?? part.name)}](${stripControls(part.uri)})`;
    case "resource":
      return `${stripControls(part.uri)}\n\n${fenced(part.text)}`;
    case "media":
      return `*(${stripControls(part.mediaType)}, ${Math.round((part.data.length * 3) / 4)} bytes${part.uri ? `, ${stripControls(part.uri)}` : ""})*`;
    default:
      return "";
  }
}
