import { CommandSandbox, SandboxUnavailableError, findExecutable, verifySandbox } from "../../src/core/index.js";

/** CI sets this: no sandbox engine (bubblewrap, or curl where asked) is then a failure, not a skip. */
export const TEST_SANDBOX_REQUIRED_ENV = "AGENTKIT_TEST_SANDBOX_REQUIRED";

export interface TestSandboxEngine {
  available: boolean;
  reason?: string;
}

/**
 * Whether the sandbox runs on this machine — serve's own checks (`CommandSandbox.create`, then
 * `verifySandbox`'s empty command), plus curl for the tests that speak through the sandbox's
 * proxy with it. `serve --listen` sandboxes by default, so its tests need it too. Skips with a
 * printed reason: `const engine = await sandboxOrSkip("serve --listen");` then
 * `describe.skipIf(!engine.available)`.
 */
export async function sandboxOrSkip(what: string, needs: { curl?: boolean } = {}): Promise<TestSandboxEngine> {
  let reason: string | undefined;
  try {
    await verifySandbox(CommandSandbox.create({ seccomp: false }));
  } catch (error) {
    if (!(error instanceof SandboxUnavailableError)) throw error;
    reason = error.message;
  }
  if (!reason && needs.curl && findExecutable("curl", process.env.PATH ?? "") === undefined) reason = "curl was not found on PATH (apt-get install curl)";
  if (!reason) return { available: true };
  if (process.env[TEST_SANDBOX_REQUIRED_ENV] === "1") throw new Error(`${what} need the sandbox (${TEST_SANDBOX_REQUIRED_ENV}=1): ${reason}`);
  process.stderr.write(`[sandbox] skipping ${what}: ${reason}\n`);
  return { available: false, reason };
}
