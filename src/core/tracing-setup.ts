import { createRequire } from "node:module";
import type { Context, TracerProvider } from "@opentelemetry/api";
import type * as OtelCore from "@opentelemetry/core";
import type * as OtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as OtlpProto from "@opentelemetry/exporter-trace-otlp-proto";
import type * as Resources from "@opentelemetry/resources";
import type * as SdkTraceBase from "@opentelemetry/sdk-trace-base";
import { context, propagation, trace } from "@opentelemetry/api";
import type { Logger } from "./logger.js";
import { errorMessage } from "./errors.js";
import { packageVersion } from "./package-files.js";
import { SyncContextManager, setContentCapture } from "./tracing.js";

/** Where spans go and how the service is named (defaults from the OTEL_* environment). */
export interface TracingOptions {
  /** Read for the standard OTEL_* variables (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** A provider of your own (then the environment's exporter settings are not used). */
  tracerProvider?: TracerProvider;
  /** `service.name` when OTEL_SERVICE_NAME does not say (default "agentkit-acp"). */
  serviceName?: string;
  logger?: Logger;
  /** Bound on the final flush at exit (default 2000 ms). */
  flushTimeoutMs?: number;
}

/** A running tracer provider: shut it down (which flushes) before exit. */
export interface TracingHandle {
  /** Exports what is queued and stops; never waits longer than the flush timeout, never throws. */
  shutdown(): Promise<void>;
}

export type TracingProtocol = "http/protobuf" | "http/json";

export interface TracingEnvConfig {
  url: string;
  protocol: TracingProtocol;
}

/**
 * What the environment asks for: undefined when tracing is off (the default: no exporter, or
 * OTEL_TRACES_EXPORTER=none). Only OTLP over HTTP is offered; anything else is a ConfigError-style
 * message thrown here so the CLI can say what to fix.
 */
export function tracingEnvConfig(env: NodeJS.ProcessEnv): TracingEnvConfig | undefined {
  if (env.OTEL_SDK_DISABLED === "true") return undefined;
  const exporter = (env.OTEL_TRACES_EXPORTER ?? "").trim().toLowerCase();
  const tracesUrl = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const baseUrl = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (exporter === "none") return undefined;
  if (exporter === "" && !tracesUrl && !baseUrl) return undefined;
  if (exporter !== "" && exporter !== "otlp") throw new Error(`OTEL_TRACES_EXPORTER=${exporter} is not supported: use "otlp" or "none"`);
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "http/protobuf").trim();
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new Error(`OTEL_EXPORTER_OTLP_PROTOCOL=${protocol} is not supported: use "http/protobuf" or "http/json"`);
  }
  const url = tracesUrl || `${(baseUrl || "http://localhost:4318").replace(/\/+$/, "")}/v1/traces`;
  try {
    new URL(url);
  } catch {
    throw new Error(`the OTLP traces endpoint "${url}" is not a URL`);
  }
  return { url, protocol };
}

/** `key=value,key2=value2` (values percent-encoded), as OTEL_RESOURCE_ATTRIBUTES. Bad pairs are skipped. */
export function parseResourceAttributes(text: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (text ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    try {
      out[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // not percent-decodable: skipped, as the SDK does
    }
  }
  return out;
}

let active: TracingHandle | undefined;
const contextManager = new SyncContextManager();

/** Makes `ctx` active wherever no other context is (a CLI command's root span; tracing must be on). */
export function setAmbientContext(ctx: Context): void {
  contextManager.setAmbient(ctx);
}

/**
 * Turns tracing on when `tracerProvider` is given or the environment asks for OTLP; otherwise
 * returns undefined and loads nothing. The SDK, exporter and context manager are loaded here,
 * on demand. Throws (a message saying what to fix) on an unsupported exporter or protocol.
 */
export async function startTracing(options: TracingOptions = {}): Promise<TracingHandle | undefined> {
  if (active) return active;
  const env = options.env ?? process.env;
  const config = options.tracerProvider ? undefined : tracingEnvConfig(env);
  if (!options.tracerProvider && !config) return undefined;
  const core = load<typeof OtelCore>("@opentelemetry/core");
  // No async hooks (their cost on Node 20 is per promise): contexts are carried explicitly.
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new core.CompositePropagator({ propagators: [new core.W3CTraceContextPropagator(), new core.W3CBaggagePropagator()] }));
  setContentCapture(env.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT?.trim().toLowerCase() === "true");
  const flushTimeoutMs = options.flushTimeoutMs ?? 2_000;
  const logger = options.logger;
  let warned = false;
  // An unreachable collector must not disturb a turn: one warning, then silence (spans are dropped
  // once the processor's bounded queue is full).
  core.setGlobalErrorHandler((error) => {
    if (warned) return;
    warned = true;
    logger?.warn("tracing: spans could not be exported (further export errors are not reported)", { error: errorMessage(error) });
  });
  const provider = options.tracerProvider ?? sdkProvider(config!, env, options.serviceName ?? "agentkit-acp");
  trace.setGlobalTracerProvider(provider);
  const flushable = provider as Partial<{ shutdown(): Promise<void>; forceFlush(): Promise<void> }>;
  let ended: Promise<void> | undefined;
  active = {
    shutdown: () =>
      (ended ??= withTimeout(
        (flushable.shutdown ?? flushable.forceFlush)?.call(provider) ?? Promise.resolve(),
        flushTimeoutMs,
      ).catch((error: unknown) => logger?.warn("tracing: the final flush failed", { error: errorMessage(error) }))),
  };
  return active;
}

/** The handle startTracing returned (for exit paths far from where it was started). */
export function tracingHandle(): TracingHandle | undefined {
  return active;
}

/**
 * Loads an OpenTelemetry SDK package on demand. require, not import(): the CLI's bundles run from
 * V8's code cache, where a dynamic import() has no loader (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING);
 * the packages ship CommonJS, and stay outside the bundles (scripts/build-bin.mjs).
 */
function load<T>(name: string): T {
  return createRequire(import.meta.url)(name) as T;
}

function sdkProvider(config: TracingEnvConfig, env: NodeJS.ProcessEnv, serviceName: string): TracerProvider {
  const sdk = load<typeof SdkTraceBase>("@opentelemetry/sdk-trace-base");
  const resources = load<typeof Resources>("@opentelemetry/resources");
  const exporterModule =
    config.protocol === "http/json"
      ? load<typeof OtlpHttp>("@opentelemetry/exporter-trace-otlp-http")
      : load<typeof OtlpProto>("@opentelemetry/exporter-trace-otlp-proto");
  // Timeout, headers, compression: the exporter reads OTEL_EXPORTER_OTLP_* itself.
  const exporter = new exporterModule.OTLPTraceExporter({ url: config.url });
  const resource = resources.resourceFromAttributes({
    "service.name": env.OTEL_SERVICE_NAME?.trim() || serviceName,
    "service.version": packageVersion(),
    ...parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES),
    ...(env.OTEL_SERVICE_NAME?.trim() ? { "service.name": env.OTEL_SERVICE_NAME.trim() } : {}),
  });
  return new sdk.BasicTracerProvider({
    resource,
    sampler: sampler(sdk, env),
    // Bounded: at most OTEL_BSP_MAX_QUEUE_SIZE (default 2048) spans wait for an exporter that is
    // down; more are dropped. Delay and batch size from OTEL_BSP_* (defaults 5 s, 512).
    spanProcessors: [new sdk.BatchSpanProcessor(exporter)],
  });
}

type Sdk = typeof SdkTraceBase;

/** OTEL_TRACES_SAMPLER (+ _ARG), default parentbased_always_on. */
function sampler(sdk: Sdk, env: NodeJS.ProcessEnv): InstanceType<Sdk["ParentBasedSampler"]> | InstanceType<Sdk["AlwaysOnSampler"]> | InstanceType<Sdk["AlwaysOffSampler"]> | InstanceType<Sdk["TraceIdRatioBasedSampler"]> {
  const name = (env.OTEL_TRACES_SAMPLER ?? "parentbased_always_on").trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? "1");
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case "always_on":
      return new sdk.AlwaysOnSampler();
    case "always_off":
      return new sdk.AlwaysOffSampler();
    case "traceidratio":
      return new sdk.TraceIdRatioBasedSampler(ratio);
    case "parentbased_always_off":
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new sdk.ParentBasedSampler({ root: new sdk.TraceIdRatioBasedSampler(ratio) });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
