import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CommandRequest, CommandRunner, FileOperations } from "../../src/tools/index.js";
import { pidAlive } from "../support/processes.js";
import { until } from "../support/until.js";

/** One implementation of the tool operations, over a fresh workspace `root`. */
export interface OperationsHarness {
  files: FileOperations;
  commands: CommandRunner;
  close(): Promise<void>;
}

/**
 * The behaviour every FileOperations / CommandRunner must have (local files and processes,
 * or an ACP client's fs/* and terminal/*): the built-in tools rely on exactly this.
 */
export function operationsContract(name: string, make: (root: string) => Promise<OperationsHarness>): void {
  describe(`FileOperations / CommandRunner contract: ${name}`, () => {
    let root: string;
    let h: OperationsHarness;
    beforeEach(async () => {
      root = realpathSync(mkdtempSync(join(tmpdir(), "agentkit-ops-contract-")));
      h = await make(root);
    });
    afterEach(async () => {
      await h.close();
      rmSync(root, { recursive: true, force: true });
    });
    const request = (command: string, extra: Partial<CommandRequest> = {}): CommandRequest => ({
      command,
      cwd: root,
      timeoutMs: 30_000,
      outputByteLimit: 64 * 1024,
      signal: new AbortController().signal,
      ...extra,
    });

    describe("FileOperations", () => {
      it("reads a whole file, and lines [line, line + limit) keeping their line endings", async () => {
        writeFileSync(join(root, "a.txt"), "1\n2\r\n3\n4");
        expect(await h.files.readTextFile(join(root, "a.txt"))).toBe("1\n2\r\n3\n4");
        expect(await h.files.readTextFile(join(root, "a.txt"), { line: 2, limit: 2 })).toBe("2\r\n3\n");
        expect(await h.files.readTextFile(join(root, "a.txt"), { line: 3 })).toBe("3\n4");
        expect(await h.files.readTextFile(join(root, "a.txt"), { line: 9, limit: 1 })).toBe("");
      });

      it("writes (creating missing directories, replacing what was there) and reads back UTF-8 exactly", async () => {
        const file = join(root, "new", "dir", "b.txt");
        await h.files.writeTextFile(file, "first");
        await h.files.writeTextFile(file, "grüße 🌍\n");
        expect(readFileSync(file, "utf8")).toBe("grüße 🌍\n");
        expect(await h.files.readTextFile(file)).toBe("grüße 🌍\n");
      });

      it("a missing file rejects with code ENOENT", async () => {
        await expect(h.files.readTextFile(join(root, "missing.txt"))).rejects.toMatchObject({ code: "ENOENT" });
      });
    });

    describe("CommandRunner", () => {
      it("runs in cwd with env; stdout and stderr both reach the output; exit codes are reported", async () => {
        const ok = await h.commands.run(request('echo "in $(pwd) $GREETING"; echo err >&2', { env: { GREETING: "hi" } }));
        expect(ok.output).toContain(`in ${root} hi`);
        expect(ok.output).toContain("err");
        expect(ok).toMatchObject({ exitCode: 0, truncated: false, timedOut: false, cancelled: false });
        expect(ok.durationMs).toBeGreaterThanOrEqual(0);
        const failed = await h.commands.run(request("exit 3"));
        expect(failed).toMatchObject({ exitCode: 3, timedOut: false, cancelled: false });
      });

      it("keeps the last outputByteLimit bytes and says it truncated", async () => {
        const result = await h.commands.run(request("seq 1 20000", { outputByteLimit: 1000 }));
        expect(result.truncated).toBe(true);
        expect(Buffer.byteLength(result.output)).toBeLessThanOrEqual(1000);
        expect(result.output.trimEnd().endsWith("20000")).toBe(true);
      });

      it("a timeout kills the command and its children: timedOut, not cancelled", async () => {
        const marker = join(root, "child.pid");
        const result = await h.commands.run(request(`sleep 60 & echo $! > ${marker}; wait`, { timeoutMs: 300 }));
        expect(result).toMatchObject({ timedOut: true, cancelled: false, exitCode: null });
        const child = Number(readFileSync(marker, "utf8"));
        await until(() => !pidAlive(child), 10_000);
      });

      it("aborting the signal kills the command: cancelled, not timedOut; an aborted signal runs nothing", async () => {
        const abort = new AbortController();
        const marker = join(root, "started");
        const running = h.commands.run(request(`touch ${marker}; sleep 60`, { signal: abort.signal }));
        await until(() => {
          try {
            readFileSync(marker);
            return true;
          } catch {
            return false;
          }
        }, 20_000);
        abort.abort();
        expect(await running).toMatchObject({ cancelled: true, timedOut: false, exitCode: null });
        const notRun = await h.commands.run(request(`touch ${join(root, "never")}`, { signal: AbortSignal.abort() }));
        expect(notRun).toMatchObject({ cancelled: true, exitCode: null, output: "" });
        expect(() => readFileSync(join(root, "never"))).toThrow();
      });
    });
  });
}
