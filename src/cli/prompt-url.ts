import { createInterface } from "node:readline";
import type { AcpUrlElicitationHandler } from "../acp/client/index.js";
import { stripControls } from "./terminal-safe.js";

/** Without a terminal nobody can open the page: every URL elicitation is declined, saying why. */
export const declineUrls: AcpUrlElicitationHandler = async () => ({
  action: "decline",
  _meta: { reason: "agentkit-acp prompt runs without a terminal, so there is nobody to show the URL to" },
});

/**
 * URL elicitations on the terminal (stderr; stdout stays the answer): the whole URL with its
 * host highlighted, then "open it? [y/N]". Nothing is opened for the human. After a yes it says
 * it is waiting and, when the agent sends `elicitation/complete`, that the page is done; there
 * is no time limit (a person is waited on) — Ctrl-C cancels the turn, which withdraws the request.
 * `ask` runs one terminal question at a time (shared with the form questions).
 */
export function terminalUrl(input: NodeJS.ReadableStream, output: NodeJS.WritableStream, onInterrupt: () => void, ask: <T>(run: () => Promise<T>) => Promise<T>, terminal = true): AcpUrlElicitationHandler {
  return ({ request, signal, completed }) =>
    ask(async () => {
      if (signal.aborted) return { action: "cancel" };
      const url = new URL(request.url);
      const shown = `${url.protocol}//\u001b[1m${stripControls(url.host)}\u001b[0m${stripControls(url.pathname + url.search + url.hash)}`;
      output.write(`\n\u001b[1m? The agent asks you to open a page:\u001b[0m ${stripControls(request.message)}\n  ${shown}\n`);
      const rl = createInterface({ input, output, terminal });
      rl.on("SIGINT", onInterrupt);
      try {
        const reply = await new Promise<string | undefined>((resolve) => {
          const onAbort = (): void => resolve(undefined);
          signal.addEventListener("abort", onAbort, { once: true });
          rl.question("  Open it yourself, then answer: go ahead? [y/N] ", (answer) => {
            signal.removeEventListener("abort", onAbort);
            resolve(answer);
          });
        });
        if (reply === undefined) {
          output.write("\n(request withdrawn by the agent)\n");
          return { action: "cancel" };
        }
        if (!/^(y|yes)$/i.test(reply.trim())) return { action: "decline" };
      } finally {
        rl.close();
      }
      output.write("  (waiting for you to finish on that page; Ctrl-C cancels)\n");
      void completed.then(() => output.write("  (the agent says the page is done)\n"));
      return { action: "accept" };
    });
}

/** Runs terminal questions one at a time (a form and a URL never read stdin together). */
export function oneAtATime(): <T>(run: () => Promise<T>) => Promise<T> {
  let queue: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>): Promise<T> => {
    const next = queue.then(run);
    queue = next.catch(() => undefined);
    return next;
  };
}
