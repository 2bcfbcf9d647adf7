import { createInterface } from "node:readline";
import type { PermissionAnswer, PermissionHandler, PermissionQuestion } from "../acp/client/index.js";
import { oneAtATime } from "./prompt-url.js";
import { sanitizeDeep } from "./terminal-safe.js";

/**
 * A terminal dialog for permission questions (one at a time, in the same queue as the forms and pages to open), on stdin/stderr. The answer is
 * the agent's own option id for the chosen entry, so nothing can be invented.
 */
export function terminalAsk(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  onInterrupt: () => void,
  raw = false,
  questions: <T>(run: () => Promise<T>) => Promise<T> = oneAtATime(),
): PermissionHandler {
  return (question, signal) => questions(() => askOne(question, signal, input, output, onInterrupt, raw));
}

/** Labels from the shown (cleaned) question, answers from the agent's own option ids. */
function choices(question: PermissionQuestion, shown: PermissionQuestion): { label: string; answer: PermissionAnswer }[] {
  if (question.options.length === 0) {
    return [
      { label: "Allow", answer: "allow_once" },
      { label: "Deny", answer: "reject_once" },
    ];
  }
  return question.options.map((o, i) => {
    const label = shown.options[i] ?? o;
    return { label: `${label.name} (${label.kind.replace("_", " ")})`, answer: { optionId: o.optionId } };
  });
}

async function askOne(
  question: PermissionQuestion,
  signal: AbortSignal,
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  onInterrupt: () => void,
  raw: boolean,
): Promise<PermissionAnswer> {
  if (signal.aborted) return "cancel";
  // The title, command, paths and option names come from the agent: no escape sequences reach the terminal.
  const shown = raw ? question : sanitizeDeep(question);
  const list = choices(question, shown);
  const details = [
    shown.command !== undefined ? `command: ${shown.command}` : undefined,
    shown.paths.length > 0 ? `paths: ${shown.paths.join(", ")}` : undefined,
  ].filter((d): d is string => d !== undefined);
  output.write(`\n\u001b[1m? Permission requested:\u001b[0m ${shown.title} [${shown.kind}]\n`);
  for (const d of details) output.write(`    ${d}\n`);
  list.forEach((c, i) => output.write(`  ${i + 1}) ${c.label}\n`));
  const rl = createInterface({ input, output, terminal: true });
  // readline takes Ctrl-C while it reads: hand it to the prompt's cancel logic.
  rl.on("SIGINT", onInterrupt);
  try {
    for (;;) {
      const reply = await new Promise<string | undefined>((resolve) => {
        const onAbort = (): void => resolve(undefined);
        signal.addEventListener("abort", onAbort, { once: true });
        rl.question(`Choose 1-${list.length}: `, (answer) => {
          signal.removeEventListener("abort", onAbort);
          resolve(answer);
        });
      });
      if (reply === undefined) {
        output.write("\n(question withdrawn: the turn was cancelled)\n");
        return "cancel";
      }
      const picked = list[Number(reply.trim()) - 1];
      if (picked) return picked.answer;
      output.write(`Please type a number from 1 to ${list.length}.\n`);
    }
  } finally {
    rl.close();
  }
}
