import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const fixture = fileURLToPath(new URL("./fixtures/sdk-warning.mjs", import.meta.url));

function runChild(): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [fixture], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe("stdout hygiene", () => {
  it("a provider warning goes to the logger on stderr; stdout stays empty, with no global AI SDK hook", async () => {
    const { code, stdout, stderr } = await runChild();
    expect(stderr).toContain("child done: ok; global hook unset");
    expect(code).toBe(0);
    expect(stderr).toMatch(/warn: model warning \(anthropic\.messages claude-sonnet-4-5\): maxOutputTokens/);
    expect(stdout).toBe("");
  });
});
