import { SpanKind, createStderrLogger, errorMessage, inSpan } from "../core/index.js";
import { setAmbientContext, startTracing } from "../core/tracing-setup.js";
import { activeContext } from "../core/tracing.js";
import type { CliIo } from "./io.js";

/**
 * Runs a client command (`prompt`, `demo` …) in one root span when the OTEL_* environment turns
 * tracing on, so its requests — and, through `_meta.traceparent`, the agent's spans — form one
 * trace; then flushes (bounded). With tracing off it only runs the command.
 */
export async function withCommandTracing(name: string, io: CliIo, run: () => Promise<number>): Promise<number> {
  let tracing;
  try {
    tracing = await startTracing({ env: io.env, logger: createStderrLogger("warn", name), serviceName: name, flushTimeoutMs: 1_500 });
  } catch (error) {
    io.stderr.write(`${name}: ${errorMessage(error)}\n`);
    return 2;
  }
  if (!tracing) return run();
  try {
    return await inSpan(name, SpanKind.INTERNAL, undefined, async (span) => {
      // The command's whole run (across every await) is inside this span.
      setAmbientContext(activeContext());
      const code = await run();
      span.setAttribute("process.exit.code", code);
      return code;
    });
  } finally {
    await tracing.shutdown();
  }
}
