import { ClientFileOperations, ClientTerminalCommandRunner } from "../acp/agent/client-ops.js";
import type { AcpAgentFactoryContext } from "../acp/agent/factory.js";
import { mcpFailureWarnings, mcpServerConfigs, startSessionMcpServers, type SessionMcpServers } from "../acp/agent/mcp-servers.js";
import type { AcpAuditSink } from "../acp/agent/audit-trail.js";
import type { CommandSandbox, Logger, SandboxPlacement, SandboxRefusal } from "../core/index.js";
import type { CommandRunner, FileOperations } from "../tools/index.js";
import { LocalCommandRunner, LocalFileOperations } from "../tools/index.js";
import { isProtectedPath } from "../core/sandbox-protected.js";

/** What `serve` does with the services a client offers. */
export interface ServeSessionServices {
  /** `--local-tools`: ignore the client's fs/terminal and run the tools on this machine. */
  localTools: boolean;
  /** `--mcp-startup-timeout`: bound on each MCP server's start-up. */
  mcpStartupTimeoutMs: number;
  /** `--mcp-call-timeout`: bound on each MCP tool call (reset by progress). */
  mcpCallTimeoutMs: number;
  /** The environment of the commands and stdio MCP servers the agent starts (`--child-env`); default this process's. */
  childEnv?: Readonly<Record<string, string | undefined>>;
  /** `--sandbox workspace`: the OS sandbox every local command and stdio MCP server runs in. */
  sandbox?: CommandSandbox;
  /** Where the sandbox's refusals are recorded with the session and principal (serve's audit trail, on with `audit`). */
  sandboxAudit?: AcpAuditSink;
}

/** The session's workspace roots: what its sandboxed commands may write. */
function sessionRoots(context: AcpAgentFactoryContext): string[] {
  return [context.cwd, ...context.additionalDirectories];
}

/** The session's place in the sandbox: its roots writable, its refusals in the audit trail. */
function sessionSandbox(context: AcpAgentFactoryContext, services: ServeSessionServices): { sandbox?: SandboxPlacement } {
  if (!services.sandbox) return {};
  const audit = services.sandboxAudit;
  const onRefusal = audit
    ? (refusal: SandboxRefusal): void => {
        const { kind, ...detail } = refusal;
        audit.record({ principal: context.principal, sessionId: context.acpSessionId, action: kind === "network" ? "sandbox_network_refused" : "sandbox_bound_hit", detail });
      }
    : undefined;
  return { sandbox: { sandbox: services.sandbox, writable: sessionRoots(context), ...(onRefusal ? { onRefusal } : {}) } };
}

/** Commands on this machine: the child environment, and the sandbox when on. */
function localCommands(context: AcpAgentFactoryContext, services: ServeSessionServices): LocalCommandRunner {
  return new LocalCommandRunner({
    ...(services.childEnv ? { env: services.childEnv } : {}),
    ...sessionSandbox(context, services),
  });
}

/**
 * Local file writes under `--sandbox`: the file tools run in serve itself, outside the sandbox,
 * so they keep off the paths the sandbox keeps read-only in the roots (`.git/hooks`,
 * `.git/config`, …; docs/sandbox.md) too. Without a sandbox: plain local files (undefined).
 */
function localFiles(context: AcpAgentFactoryContext, services: ServeSessionServices): { files?: FileOperations } {
  if (!services.sandbox) return {};
  const local = new LocalFileOperations();
  const roots = sessionRoots(context);
  return {
    files: {
      readTextFile: (path, options) => local.readTextFile(path, options),
      writeTextFile: async (path, content, options) => {
        if (isProtectedPath(path, roots)) throw new Error(`${path} is kept read-only by the sandbox (a later unsandboxed program runs what it holds; docs/sandbox.md#protected-paths-inside-the-writable-roots)`);
        return local.writeTextFile(path, content, options);
      },
    },
  };
}

/**
 * The session's file and command operations: through the client's `fs/*` (each direction only
 * when advertised) and `terminal/*` when it offers them, unless `--local-tools`. Undefined
 * fields mean local.
 */
export function sessionOperations(context: AcpAgentFactoryContext, services: ServeSessionServices): { files?: FileOperations; commands?: CommandRunner; label: string } {
  if (services.localTools) return { ...localFiles(context, services), commands: localCommands(context, services), label: "local tools (--local-tools)" };
  const { client } = context;
  const ops: { files?: FileOperations; commands?: CommandRunner; label: string } = { label: "" };
  const used: string[] = [];
  if (client.canReadFiles || client.canWriteFiles) {
    ops.files = new ClientFileOperations(client, context.acpSessionId, localFiles(context, services).files);
    used.push(`client fs (${[client.canReadFiles ? "read" : "", client.canWriteFiles ? "write" : ""].filter(Boolean).join("+")})`);
  }
  if (client.hasTerminal) {
    ops.commands = new ClientTerminalCommandRunner(client, context.acpSessionId, { logger: context.logger });
    used.push("client terminal");
  }
  ops.commands ??= localCommands(context, services);
  if (!ops.files) Object.assign(ops, localFiles(context, services));
  ops.label = used.length > 0 ? used.join(", ") : "local tools (the client offers no fs/terminal)";
  return ops;
}

/** The session's MCP servers (stdio, http, sse, acp), started with a bounded start-up; failures become warnings. */
export async function sessionMcpServers(
  context: AcpAgentFactoryContext,
  services: ServeSessionServices,
  logger: Logger,
): Promise<SessionMcpServers & { warnings: string[] }> {
  const configs = context.mcpServerConfigs ?? mcpServerConfigs(context.mcpServers, { http: true, sse: true, acp: false });
  const started = await startSessionMcpServers(configs, {
    cwd: context.cwd,
    logger,
    startupTimeoutMs: services.mcpStartupTimeoutMs,
    callTimeoutMs: services.mcpCallTimeoutMs,
    clientInfo: { name: "agentkit-acp", version: "serve" },
    ...(context.signal ? { signal: context.signal } : {}),
    ...(services.childEnv ? { stdioEnv: services.childEnv } : {}),
    ...(services.sandbox ? { stdioSandbox: sessionSandbox(context, services).sandbox } : {}),
  });
  if (configs.length > 0) {
    logger.info("MCP servers for the session", { sessionId: context.acpSessionId, started: configs.length - started.failures.length, failed: started.failures.length });
  }
  return { tools: started.tools, failures: started.failures, close: () => started.close(), warnings: mcpFailureWarnings(started.failures) };
}
