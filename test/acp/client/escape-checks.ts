import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { snapshot, type Layout } from "./host-support.js";

export interface Report {
  name: string;
  op: "read" | "write" | "info";
  path: string;
  expect: "allow" | "refuse" | "info";
  ok: boolean;
  content?: string;
  error?: { code: number; message: string; data?: { reason?: string; path?: string } };
}

// Every attack the fixture agent must try (so the list cannot silently shrink).
/** The fs capabilities the fixture agent was told about in `initialize`. */
export function advertisedFs(results: Report[]): { readTextFile?: boolean; writeTextFile?: boolean } | undefined {
  const info = results.find((r) => r.name === "client-capabilities");
  return (JSON.parse(info?.content ?? "null") as { fs?: { readTextFile?: boolean; writeTextFile?: boolean } } | null)?.fs;
}

export const ATTACKS = [
  "relative", "relative-dotdot", "empty", "file-url", "tilde", "absolute-outside", "dotdot", "dotdot-deep",
  "dotdot-double-slash", "dotdot-missing-dir", "prefix-confusion", "prefix-confusion-dotdot", "symlink-file-absolute",
  "symlink-file-relative", "symlink-dir", "symlink-dir-new-file", "symlink-dir-new-subdir", "symlink-chain",
  "symlink-dir-chain", "symlink-to-prefix-sibling", "symlink-loop", "symlink-to-dev-zero", "symlink-to-etc",
  "dangling-symlink", "dangling-symlink-relative", "dangling-dir-symlink", "nul-byte", "proc-self-root", "proc-self-cwd",
  "proc-self-environ", "trailing-slash-outside", "trailing-slash-dir-link", "upper-case", "fifo", "directory-itself",
  "hard-link", "long-path", "etc-passwd", "root-dir",
];

/** No read returned outside content; nothing outside the roots was created or changed; no planted content anywhere. */
export function expectZeroEscapes(l: Layout, results: Report[], before: { outside: Record<string, string>; evil: Record<string, string>; extra: Record<string, string> }) {
  // No read returned outside content.
  for (const r of results) expect(r.content ?? "", r.name).not.toContain(l.marker);
  // Nothing outside the roots was created or changed.
  expect(snapshot(l.outside)).toEqual(before.outside);
  expect(snapshot(l.evil)).toEqual(before.evil);
  expect(snapshot(l.extra)).toEqual(before.extra);
  const everything = snapshot(l.ws);
  for (const [path, kind] of Object.entries(everything)) {
    if (kind.startsWith("file:")) expect(readFileSync(join(l.ws, path), "utf8"), path).not.toContain("PWNED");
  }
}

