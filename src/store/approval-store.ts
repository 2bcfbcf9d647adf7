import { createHash } from "node:crypto";
import { mkdir, readFile, readdir, realpath, rename, unlink } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import type { Logger } from "../core/index.js";
import { AgentKitError, createStderrLogger, errorMessage } from "../core/index.js";
import { fsyncDirectory, isErrnoCode, writeFileAtomic } from "./durable-fs.js";
import { fileLocks } from "./keyed-lock.js";
import { defaultStateDir } from "./state-dir.js";

/** A remembered "always allow" / "always reject" answer. */
export interface ApprovalMemoryEntry {
  decision: "allow" | "reject";
  createdAt: string;
  toolName?: string;
  /** Human-readable normalized target (for listing); the key is what matches. */
  target?: string;
  /** Why a reject was chosen, if the user said. */
  reason?: string;
}

/** One remembered approval as `list` returns it: its key and what was decided. */
export interface ApprovalMemoryRecord {
  key: string;
  entry: ApprovalMemoryEntry;
}

/**
 * Remembered approval answers per workspace root. Keys are built by the agent side from the
 * request kind, tool, root and normalized target, never from call ids or model text; the store
 * treats them as opaque strings. Roots are compared after realpath (symlinked checkouts share).
 */
export interface ApprovalMemoryStore {
  get(root: string, key: string): Promise<ApprovalMemoryEntry | undefined>;
  set(root: string, key: string, entry: ApprovalMemoryEntry): Promise<void>;
  delete(root: string, key: string): Promise<boolean>;
  /** Forgets one root's answers, or every root's without an argument. */
  clear(root?: string): Promise<void>;
  /** Sorted by key. */
  list(root: string): Promise<ApprovalMemoryRecord[]>;
}

/** The canonical form of a workspace root: absolute, symlinks resolved (when it exists). */
export async function normalizeWorkspaceRoot(root: string): Promise<string> {
  if (typeof root !== "string" || !isAbsolute(root)) throw new AgentKitError("invalid_argument", `workspace root must be an absolute path, got ${JSON.stringify(root)}`);
  try {
    return await realpath(root);
  } catch {
    return resolve(root);
  }
}

export function checkApprovalKey(key: string): void {
  if (typeof key !== "string" || key.length === 0) throw new AgentKitError("invalid_argument", "approval memory key must be a non-empty string");
}

/** A clean copy of a valid entry, or undefined. */
export function cleanApprovalEntry(value: unknown): ApprovalMemoryEntry | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  if ((v.decision !== "allow" && v.decision !== "reject") || typeof v.createdAt !== "string") return undefined;
  const entry: ApprovalMemoryEntry = { decision: v.decision, createdAt: v.createdAt };
  for (const field of ["toolName", "target", "reason"] as const) if (typeof v[field] === "string") entry[field] = v[field];
  return entry;
}

/** A clean copy of a valid entry; throws `invalid_argument` otherwise. */
export function validApprovalEntry(entry: ApprovalMemoryEntry): ApprovalMemoryEntry {
  const clean = cleanApprovalEntry(entry);
  if (!clean) throw new AgentKitError("invalid_argument", 'approval memory entry needs decision "allow" | "reject" and a createdAt string');
  return clean;
}

function sortedRecords(entries: Map<string, ApprovalMemoryEntry>): ApprovalMemoryRecord[] {
  return [...entries.keys()].sort().map((key) => ({ key, entry: { ...entries.get(key)! } }));
}

/**
 * Remembered approvals ("always allow / always reject") kept in memory: for tests and `serve --no-persist`; they end
 * with the process.
 */
export class InMemoryApprovalMemoryStore implements ApprovalMemoryStore {
  readonly #roots = new Map<string, Map<string, ApprovalMemoryEntry>>();

  async get(root: string, key: string): Promise<ApprovalMemoryEntry | undefined> {
    checkApprovalKey(key);
    const entry = this.#roots.get(await normalizeWorkspaceRoot(root))?.get(key);
    return entry && { ...entry };
  }

  async set(root: string, key: string, entry: ApprovalMemoryEntry): Promise<void> {
    checkApprovalKey(key);
    const clean = validApprovalEntry(entry);
    const normalized = await normalizeWorkspaceRoot(root);
    const entries = this.#roots.get(normalized) ?? new Map<string, ApprovalMemoryEntry>();
    entries.set(key, clean);
    this.#roots.set(normalized, entries);
  }

  async delete(root: string, key: string): Promise<boolean> {
    checkApprovalKey(key);
    return this.#roots.get(await normalizeWorkspaceRoot(root))?.delete(key) ?? false;
  }

  async clear(root?: string): Promise<void> {
    if (root === undefined) this.#roots.clear();
    else this.#roots.delete(await normalizeWorkspaceRoot(root));
  }

  async list(root: string): Promise<ApprovalMemoryRecord[]> {
    return sortedRecords(this.#roots.get(await normalizeWorkspaceRoot(root)) ?? new Map());
  }
}

/**
 * Options of `FileApprovalMemoryStore`: the state directory (one file per workspace root under `approvals/`) and the
 * logger.
 */
export interface FileApprovalMemoryStoreOptions {
  /** Defaults to `defaultStateDir()`; files live in `<stateDir>/approvals/`. */
  stateDir?: string;
  logger?: Logger;
}

const APPROVALS_VERSION = 1;

interface RootFile {
  entries: Map<string, ApprovalMemoryEntry>;
  /** The file exists but could not be used; it is moved aside before the next write. */
  unreadable: boolean;
}

/**
 * One JSON file per workspace root, `<stateDir>/approvals/<sha256(realpath(root))[0..32]>.json`:
 * `{ "version": 1, "root": "/real/path", "entries": { "<key>": { decision, createdAt, … } } }`.
 * Read fresh on every call (so another process's or a previous run's answers count), written
 * atomically (temp file + rename). An unreadable file is reported, treated as empty, and kept
 * as `<name>.corrupt-<time>` when the next answer is written — never a crash.
 */
export class FileApprovalMemoryStore implements ApprovalMemoryStore {
  readonly dir: string;
  readonly #logger: Logger;
  /** Problems already reported (path + content length), so a bad file is not logged on every lookup. */
  readonly #reported = new Set<string>();

  constructor(options: FileApprovalMemoryStoreOptions = {}) {
    this.dir = join(options.stateDir ?? defaultStateDir(), "approvals");
    this.#logger = options.logger ?? createStderrLogger();
  }

  /** The file holding one root's answers (whether or not it exists yet). */
  async fileFor(root: string): Promise<string> {
    return this.#pathOf(await normalizeWorkspaceRoot(root));
  }

  async get(root: string, key: string): Promise<ApprovalMemoryEntry | undefined> {
    checkApprovalKey(key);
    const normalized = await normalizeWorkspaceRoot(root);
    const path = this.#pathOf(normalized);
    const file = await fileLocks.run(path, () => this.#read(path, normalized));
    return file.entries.get(key);
  }

  async set(root: string, key: string, entry: ApprovalMemoryEntry): Promise<void> {
    checkApprovalKey(key);
    const clean = validApprovalEntry(entry);
    await this.#update(root, (entries) => {
      entries.set(key, clean);
      return true;
    });
  }

  async delete(root: string, key: string): Promise<boolean> {
    checkApprovalKey(key);
    return this.#update(root, (entries) => entries.delete(key));
  }

  async clear(root?: string): Promise<void> {
    if (root !== undefined) {
      await this.#remove(this.#pathOf(await normalizeWorkspaceRoot(root)));
      return;
    }
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return;
      throw error;
    }
    for (const name of names.filter((n) => n.endsWith(".json") && !n.startsWith("."))) await this.#remove(join(this.dir, name));
  }

  async list(root: string): Promise<ApprovalMemoryRecord[]> {
    const normalized = await normalizeWorkspaceRoot(root);
    const path = this.#pathOf(normalized);
    return sortedRecords((await fileLocks.run(path, () => this.#read(path, normalized))).entries);
  }

  #pathOf(normalizedRoot: string): string {
    return join(this.dir, `${createHash("sha256").update(normalizedRoot).digest("hex").slice(0, 32)}.json`);
  }

  async #update(root: string, change: (entries: Map<string, ApprovalMemoryEntry>) => boolean): Promise<boolean> {
    const normalized = await normalizeWorkspaceRoot(root);
    const path = this.#pathOf(normalized);
    return fileLocks.run(path, async () => {
      const file = await this.#read(path, normalized);
      if (!change(file.entries)) return false;
      await mkdir(this.dir, { recursive: true, mode: 0o700 });
      if (file.unreadable) {
        const aside = `${path}.corrupt-${Date.now()}`;
        await rename(path, aside).catch(() => undefined);
        this.#logger.warn(`approval memory: unreadable file kept as ${aside}; starting a new one`);
      }
      const entries = Object.fromEntries([...file.entries].map(([k, v]) => [k, v]));
      await writeFileAtomic(path, `${JSON.stringify({ version: APPROVALS_VERSION, root: normalized, entries }, null, 2)}\n`);
      return true;
    });
  }

  async #remove(path: string): Promise<void> {
    await fileLocks.run(path, async () => {
      try {
        await unlink(path);
      } catch (error) {
        if (isErrnoCode(error, "ENOENT")) return;
        throw error;
      }
      await fsyncDirectory(this.dir);
    });
  }

  async #read(path: string, root: string): Promise<RootFile> {
    let text: string;
    try {
      text = await readFile(path, "utf8");
    } catch (error) {
      if (isErrnoCode(error, "ENOENT")) return { entries: new Map(), unreadable: false };
      this.#logger.warn(`approval memory: cannot read ${path}; treating as empty`, { error: errorMessage(error) });
      return { entries: new Map(), unreadable: false };
    }
    const entries = new Map<string, ApprovalMemoryEntry>();
    try {
      const value = JSON.parse(text) as { version?: unknown; root?: unknown; entries?: unknown };
      if (value.version !== APPROVALS_VERSION) throw new Error(`unsupported version ${JSON.stringify(value.version)}`);
      if (value.root !== root) throw new Error(`file is for root ${JSON.stringify(value.root)}`);
      if (typeof value.entries !== "object" || value.entries === null) throw new Error("no entries object");
      for (const [key, raw] of Object.entries(value.entries)) {
        const entry = cleanApprovalEntry(raw);
        if (entry) entries.set(key, entry);
        else this.#warnOnce(`${path}:${text.length}:${key}`, `approval memory: invalid entry ${JSON.stringify(key)} in ${path} ignored`);
      }
      return { entries, unreadable: false };
    } catch (error) {
      this.#warnOnce(`${path}:${text.length}`, `approval memory: ${path} is unreadable (${errorMessage(error)}); treating as empty`);
      return { entries: new Map(), unreadable: true };
    }
  }

  #warnOnce(id: string, message: string): void {
    if (this.#reported.has(id)) return;
    this.#reported.add(id);
    this.#logger.warn(message);
  }
}
