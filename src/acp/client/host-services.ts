import type * as acp from "@agentclientprotocol/sdk/unstable";

/** What a host service knows of the ACP session a request belongs to. */
export interface HostSessionInfo {
  sessionId: string;
  /** Absolute session cwd (an approved root). */
  cwd: string;
  /** Further approved roots. */
  additionalDirectories: string[];
}

/**
 * The client's file system, offered to the agent (`fs/read_text_file`, `fs/write_text_file`).
 * Advertised in `clientCapabilities.fs` exactly as `canRead` / `canWrite` say.
 * Methods throw `RequestError` (from the SDK) with a clear message when a request is refused.
 */
export interface FileSystemHostService {
  readonly canRead: boolean;
  readonly canWrite: boolean;
  readTextFile(params: acp.ReadTextFileRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.ReadTextFileResponse>;
  writeTextFile(params: acp.WriteTextFileRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.WriteTextFileResponse>;
}

/**
 * The client's terminals, offered to the agent (`terminal/*`); advertised as `clientCapabilities.terminal`.
 * `releaseSession` releases every terminal of a session (called when the session closes).
 */
export interface TerminalHostService {
  create(params: acp.CreateTerminalRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.CreateTerminalResponse>;
  output(params: acp.TerminalOutputRequest, session: HostSessionInfo): Promise<acp.TerminalOutputResponse>;
  waitForExit(params: acp.WaitForTerminalExitRequest, session: HostSessionInfo, signal: AbortSignal): Promise<acp.WaitForTerminalExitResponse>;
  kill(params: acp.KillTerminalRequest, session: HostSessionInfo): Promise<acp.KillTerminalResponse>;
  release(params: acp.ReleaseTerminalRequest, session: HostSessionInfo): Promise<acp.ReleaseTerminalResponse>;
  releaseSession(sessionId: string): Promise<void>;
  /** Ends every terminal (client shutdown). */
  dispose(): Promise<void>;
}

/** The services the client offers the agent (each advertised only when given). */
export interface HostServices {
  fileSystem?: FileSystemHostService;
  terminal?: TerminalHostService;
}
