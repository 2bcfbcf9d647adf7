import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type CliRun, runPrompt } from "./support.js";
import { fixture } from "../acp/client/helpers.js";

// Issue 14 case 9: the permission presets also bound the host services an agent can use
// without asking (fs/write_text_file, terminal/*), through the real CLI.

const agent = `"${process.execPath}" "${fixture}"`;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function prompt(dir: string, preset: string, text: string): Promise<CliRun> {
  return runPrompt(["--agent", agent, "--permissions", preset, "--cwd", dir, "--json", text], dir);
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentkit-robust-presets-"));
  dirs.push(dir);
  writeFileSync(join(dir, "notes.txt"), "the notes");
  return dir;
}

// preset → [read allowed, write allowed, terminal allowed]
const table: Array<[string, boolean, boolean, boolean]> = [
  ["deny", true, false, false],
  ["allow-reads", true, false, false],
  ["ask", true, true, true], // non-interactive here: tool-call questions are denied; host calls follow the roots only
  ["allow-all", true, true, true],
];

describe("robustness: --permissions presets gate the host services (the CLI in-process, fixture agent that never asks)", () => {
  for (const [preset, read, write, terminal] of table) {
    it(`--permissions ${preset}: read ${read ? "allowed" : "refused"}, write ${write ? "allowed" : "refused"}, terminal ${terminal ? "allowed" : "refused"}`, async () => {
      const dir = workspace();
      const [r, w, t] = await Promise.all([
        prompt(dir, preset, `readfile ${join(dir, "notes.txt")}`),
        prompt(dir, preset, `writefile ${join(dir, "written.txt")} new content`),
        prompt(dir, preset, `term echo ran > ${join(dir, "ran.txt")}`),
      ]);
      expect(r.code === 0, r.stderr).toBe(read);
      if (read) expect(r.stdout).toContain("read: the notes");
      expect(w.code === 0, w.stderr).toBe(write);
      expect(existsSync(join(dir, "written.txt"))).toBe(write);
      expect(t.code === 0, t.stderr).toBe(terminal);
      expect(existsSync(join(dir, "ran.txt"))).toBe(terminal);
      if (!write) expect(w.stderr).toContain(`--permissions ${preset} (reads only)`);
      if (!terminal) expect(t.stderr).toContain(`--permissions ${preset} (reads only)`);
      if (write) expect(readFileSync(join(dir, "written.txt"), "utf8")).toBe("new content");
    });
  }
});
