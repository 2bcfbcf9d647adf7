import type { Logger } from "../core/index.js";

/** The shape ai 6 hands a warnings function (see `AI_SDK_LOG_WARNINGS`). */
interface SdkWarningBatch {
  warnings: Array<{ type: string; feature?: string; details?: string; message?: string }>;
  provider: string;
  model: string;
}

type SdkWarningSink = false | ((batch: SdkWarningBatch) => void) | undefined;
const globalScope = globalThis as { AI_SDK_LOG_WARNINGS?: SdkWarningSink };

let currentLogger: Logger | undefined;

const routeToLogger = (batch: SdkWarningBatch): void => {
  for (const warning of batch.warnings) {
    const what = warning.message ?? [warning.feature, warning.details].filter(Boolean).join(": ");
    currentLogger?.warn(`model warning (${batch.provider} ${batch.model}): ${what || warning.type}`);
  }
};

/**
 * ai 6 prints its first warning with console.info — to stdout, which carries ACP. Route SDK
 * warnings to our logger (stderr by default) instead. A sink the application set itself
 * (`false` or its own function) is left alone.
 */
export function routeSdkWarnings(logger: Logger): void {
  currentLogger = logger;
  const sink = globalScope.AI_SDK_LOG_WARNINGS;
  if (sink === undefined || sink === routeToLogger) globalScope.AI_SDK_LOG_WARNINGS = routeToLogger;
}
