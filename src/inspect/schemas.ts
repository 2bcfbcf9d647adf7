import { createRequire } from "node:module";
import { dirname, join } from "node:path";

/** The part of a zod schema used here. */
export interface SchemaLike {
  safeParse(value: unknown): { success: true } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
}

/**
 * The SDK's own zod schemas. Its entry points do not export them, so they are loaded from the
 * file its `/unstable` entry imports (a superset of stable v1: unstable methods validate too).
 * Resolved from the installed package, so they always match the SDK on the wire. Loaded on
 * first use with require (an ES module without top-level await; Node 20.19+), so that importing
 * this module costs nothing and it bundles as CommonJS.
 */
function loadSdkSchemas(): Record<string, SchemaLike | undefined> {
  const require = createRequire(import.meta.url);
  const stableEntry = require.resolve("@agentclientprotocol/sdk"); // …/dist/v1/stable/acp.js
  return require(join(dirname(stableEntry), "..", "unstable", "schema", "zod.gen.js")) as Record<string, SchemaLike | undefined>;
}

let sdkSchemas: Record<string, SchemaLike | undefined> | undefined;

/** method → [params schema, result schema] (names of the SDK's generated schemas). */
const METHODS: Record<string, [string, string | undefined]> = {
  initialize: ["zInitializeRequest", "zInitializeResponse"],
  authenticate: ["zAuthenticateRequest", "zAuthenticateResponse"],
  logout: ["zLogoutRequest", "zLogoutResponse"],
  "session/new": ["zNewSessionRequest", "zNewSessionResponse"],
  "session/load": ["zLoadSessionRequest", "zLoadSessionResponse"],
  "session/list": ["zListSessionsRequest", "zListSessionsResponse"],
  "session/delete": ["zDeleteSessionRequest", "zDeleteSessionResponse"],
  "session/resume": ["zResumeSessionRequest", "zResumeSessionResponse"],
  "session/close": ["zCloseSessionRequest", "zCloseSessionResponse"],
  "session/fork": ["zForkSessionRequest", "zForkSessionResponse"],
  "session/set_mode": ["zSetSessionModeRequest", "zSetSessionModeResponse"],
  "session/set_config_option": ["zSetSessionConfigOptionRequest", "zSetSessionConfigOptionResponse"],
  "session/prompt": ["zPromptRequest", "zPromptResponse"],
  "session/cancel": ["zCancelNotification", undefined],
  "session/request_permission": ["zRequestPermissionRequest", "zRequestPermissionResponse"],
  "session/update": ["zSessionNotification", undefined],
  "fs/read_text_file": ["zReadTextFileRequest", "zReadTextFileResponse"],
  "fs/write_text_file": ["zWriteTextFileRequest", "zWriteTextFileResponse"],
  "terminal/create": ["zCreateTerminalRequest", "zCreateTerminalResponse"],
  "terminal/output": ["zTerminalOutputRequest", "zTerminalOutputResponse"],
  "terminal/release": ["zReleaseTerminalRequest", "zReleaseTerminalResponse"],
  "terminal/wait_for_exit": ["zWaitForTerminalExitRequest", "zWaitForTerminalExitResponse"],
  "terminal/kill": ["zKillTerminalRequest", "zKillTerminalResponse"],
  "elicitation/create": ["zCreateElicitationRequest", "zCreateElicitationResponse"],
  "elicitation/complete": ["zCompleteElicitationNotification", undefined],
  "$/cancel_request": ["zCancelRequestNotification", undefined],
};

export function knownMethod(method: string): boolean {
  return method in METHODS;
}

function check(schemaName: string | undefined, value: unknown): string | undefined {
  const schema = schemaName ? (sdkSchemas ??= loadSdkSchemas())[schemaName] : undefined;
  if (!schema) return undefined;
  const r = schema.safeParse(value ?? {});
  if (r.success) return undefined;
  return r.error.issues
    .slice(0, 3)
    .map((i) => `${i.path.length ? i.path.map(String).join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}

/** Why `params` are not valid for `method` per the SDK schema, or undefined. */
export function checkParams(method: string, params: unknown): string | undefined {
  return check(METHODS[method]?.[0], params);
}

/** Why `result` is not a valid answer to `method` per the SDK schema, or undefined. */
export function checkResult(method: string, result: unknown): string | undefined {
  return check(METHODS[method]?.[1], result);
}
