import { randomBytes } from "node:crypto";
import type { FileHandle } from "node:fs/promises";
import { fdatasync, fdatasyncSync, fstatSync, ftruncateSync, readSync, writeSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { promisify } from "node:util";

/** Makes a created, renamed or removed directory entry durable. Best effort where unsupported (Windows). */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(dir, "r");
    await handle.sync();
  } catch {
    // Directories cannot be opened or fsync'd on some platforms; the data itself is synced.
  } finally {
    await handle?.close().catch(() => undefined);
  }
}

/** Writes a whole file crash-safely: temp file, fsync, rename over the target, fsync the directory. */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    const handle = await open(temp, "w", 0o600);
    try {
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(dirname(path));
}

const NEWLINE = 0x0a;

/**
 * If the file does not end with a newline (a write torn by a crash), truncates it back to just
 * after its last newline and returns how many bytes were dropped. Those bytes were never
 * acknowledged: an append resolves only after its whole line, newline included, is synced.
 * Synchronous: a stat and a one-byte read from the page cache (see JsonlSessionStore's append).
 */
export function truncateTornTailSync(fd: number): { size: number; dropped: number } {
  const { size } = fstatSync(fd);
  if (size === 0) return { size, dropped: 0 };
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] === NEWLINE) return { size, dropped: 0 };
  const chunk = Buffer.alloc(Math.min(64 * 1024, size));
  let end = size;
  let keep = 0;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const bytesRead = readSync(fd, chunk, 0, end - start, start);
    const at = chunk.subarray(0, bytesRead).lastIndexOf(NEWLINE);
    if (at >= 0) {
      keep = start + at + 1;
      break;
    }
    end = start;
  }
  ftruncateSync(fd, keep);
  fdatasyncSync(fd);
  return { size: keep, dropped: size - keep };
}

/** Writes the whole buffer at the file's current position (O_APPEND: its end). */
export function writeAllSync(fd: number, data: Buffer): void {
  for (let offset = 0; offset < data.length; ) offset += writeSync(fd, data, offset, data.length - offset);
}

/** fdatasync off the event loop: the one step of an append that waits for the device. */
export const fdatasyncAsync: (fd: number) => Promise<void> = promisify(fdatasync);

/** The first line of a file (without its newline), or undefined if it has no complete first line. */
export async function readFirstLine(path: string): Promise<string | undefined> {
  const handle = await open(path, "r");
  try {
    const chunk = Buffer.alloc(16 * 1024);
    const parts: Buffer[] = [];
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(chunk, 0, chunk.length, position);
      if (bytesRead === 0) return undefined;
      const at = chunk.subarray(0, bytesRead).indexOf(NEWLINE);
      if (at >= 0) {
        parts.push(Buffer.from(chunk.subarray(0, at)));
        return Buffer.concat(parts).toString("utf8");
      }
      parts.push(Buffer.from(chunk.subarray(0, bytesRead)));
      position += bytesRead;
    }
  } finally {
    await handle.close();
  }
}

export function isErrnoCode(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/** The file opened for reading, or undefined when it does not exist (other errors throw). */
export async function openIfPresent(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, "r");
  } catch (error) {
    if (isErrnoCode(error, "ENOENT")) return undefined;
    throw error;
  }
}
