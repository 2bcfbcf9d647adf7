import { AcpClient, type AcpAgentConfig } from "../acp/client/index.js";
import { EXIT, type PromptArgs } from "./prompt-args.js";
import { describeFailure } from "./prompt-render.js";
import type { CliIo } from "./io.js";
import { stripControls } from "./terminal-safe.js";

/** `prompt --list | --archive ID | --unarchive ID`: one session-management call, then exit. */
export async function runSessionAction(io: CliIo, args: PromptArgs, config: AcpAgentConfig): Promise<number> {
  let client: AcpClient | undefined;
  try {
    client = await AcpClient.start(config);
    if (args.archive !== undefined) {
      await client.archiveSession(args.archive);
      io.stderr.write(`archived ${args.archive}\n`);
      return EXIT.endTurn;
    }
    if (args.unarchive !== undefined) {
      await client.unarchiveSession(args.unarchive);
      io.stderr.write(`unarchived ${args.unarchive}\n`);
      return EXIT.endTurn;
    }
    let cursor: string | undefined;
    let count = 0;
    do {
      const page = await client.listSessions({ cwd: args.cwd, ...(cursor !== undefined ? { cursor } : {}), ...(args.archived ? { archived: args.archived } : {}) });
      for (const s of page.sessions) {
        count += 1;
        if (args.json) {
          io.stdout.write(`${JSON.stringify({ type: "session", sessionId: s.sessionId, title: s.title ?? null, updatedAt: s.updatedAt ?? null, archived: s.archived === true, cwd: s.cwd })}\n`);
        } else {
          const mark = s.archived === true ? " [archived]" : "";
          const title = s.title == null ? "(untitled)" : args.raw ? s.title : stripControls(s.title);
          io.stdout.write(`${stripControls(s.sessionId)}  ${s.updatedAt ?? "-"}  ${title}${mark}\n`);
        }
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    if (count === 0 && !args.json) io.stderr.write(`(no sessions in ${args.cwd})\n`);
    return EXIT.endTurn;
  } catch (error) {
    io.stderr.write(`agentkit-acp prompt: ${describeFailure(error)}\n`);
    return EXIT.error;
  } finally {
    await client?.close();
  }
}
