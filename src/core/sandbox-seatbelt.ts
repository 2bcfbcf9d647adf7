import { existsSync } from "node:fs";
import { ancestorsBelowRoot } from "./sandbox-protected.js";
/**
 * macOS Seatbelt (`sandbox-exec -p PROFILE`) profile for a sandboxed command: the same policy
 * as the bubblewrap one — reads of the system, writes only in the workspace roots and the
 * temporary directories, no network, no signals outside the sandbox. Not run by CI (Linux);
 * unit-tested on its text. SBPL reference: Apple's sandbox profiles in /System/Library/Sandbox.
 */
export interface SeatbeltPolicy {
  /** Directories the command may write (real paths). */
  writable: readonly string[];
  /** Further directories it may read (e.g. Node's install prefix). */
  readable?: readonly string[];
  /** Paths inside the writable roots that stay read-only (sandbox-protected.ts), existing or not. */
  protect?: readonly string[];
}

/** Home directories stay unreadable, as on Linux where they are not mounted. */
const hiddenRoots = ["/Users", "/var/root", "/Volumes"];

export function seatbeltProfile(policy: SeatbeltPolicy): string {
  const writable = policy.writable.map(sbplString);
  const readable = (policy.readable ?? []).map(sbplString);
  const lines = [
    "(version 1)",
    "(deny default)",
    "(allow process-exec)",
    "(allow process-fork)",
    // Signals only to processes of this sandbox (never the server that started it).
    "(allow signal (target same-sandbox))",
    "(allow sysctl-read)",
    "(allow mach-lookup)",
    "(allow ipc-posix-shm)",
    "(allow file-read*)",
    `(deny file-read* ${hiddenRoots.map((root) => `(subpath ${sbplString(root)})`).join(" ")})`,
  ];
  // Re-allow what must stay readable under a hidden root: the workspace and Node's prefix.
  const reopen = [...writable, ...readable];
  if (reopen.length > 0) lines.push(`(allow file-read* ${reopen.map((dir) => `(subpath ${dir})`).join(" ")})`);
  const writes = [...writable.map((dir) => `(subpath ${dir})`), '(subpath "/private/tmp")', '(subpath "/private/var/folders")', '(literal "/dev/null")', '(literal "/dev/tty")'];
  lines.push(`(allow file-write* ${writes.join(" ")})`);
  // Later rules win: the protected paths stay read-only inside the writable roots, and the
  // existing directories above them cannot be renamed or removed (a `.git` moved aside and
  // recreated would take its hooks with it).
  const protect = policy.protect ?? [];
  if (protect.length > 0) {
    lines.push(`(deny file-write* ${protect.map((path) => `(subpath ${sbplString(path)})`).join(" ")})`);
    const pinned = [...new Set(protect.flatMap((path) => ancestorsBelowRoot(path, policy.writable)))].filter((dir) => existsSync(dir));
    if (pinned.length > 0) lines.push(`(deny file-write* ${pinned.map((dir) => `(literal ${sbplString(dir)})`).join(" ")})`);
  }
  // No network at all (the command's; the agent process itself is not in this profile).
  lines.push("(deny network*)");
  return `${lines.join("\n")}\n`;
}

/** A path as an SBPL string literal (backslashes and quotes escaped). */
function sbplString(path: string): string {
  return `"${path.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
}
