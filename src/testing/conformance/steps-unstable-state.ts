import type { Run } from "./run.js";
import { unstableStateChecks } from "./checks-unstable-state.js";
import { describeOutcome, type CallOutcome, type WireAgent } from "./wire.js";

const IDS = unstableStateChecks.map((c) => c.id);
const UNKNOWN_PROVIDER = "agentkit-check-no-such-provider";

interface Provider {
  providerId: string;
  supported: string[];
  required: boolean;
  current?: { apiType: string; baseUrl: string } | null;
}

/** The state-changing checks, in a launch of their own after everything else (logout last). */
export async function checkStateChanging(run: Run): Promise<void> {
  const wanted = IDS.filter((id) => run.wants(id));
  if (wanted.length === 0) return;
  if (!run.changeState) {
    for (const id of wanted) run.skip(id, "changes the agent's state (signs out / reroutes a provider): run with --change-state");
    return;
  }
  const gates: Record<string, string> = { "unstable.providers-set": "providers", "unstable.providers-disable": "providers", "unstable.logout": "auth.logout" };
  const runnable = wanted.filter((id) => run.advertises(gates[id]!) || (run.skip(id, `not advertised (${gates[id]!})`), false));
  if (runnable.length === 0) return;
  const agent = await run.launchReady();
  if (!agent) {
    for (const id of runnable) run.fail(id, "a fresh launch of the agent did not initialize");
    return;
  }
  try {
    if (runnable.includes("unstable.providers-set")) await checkProvidersSet(run, agent);
    if (runnable.includes("unstable.providers-disable")) await checkProvidersDisable(run, agent);
    if (runnable.includes("unstable.logout")) await checkLogout(run, agent);
  } finally {
    await agent.kill(run.exitBoundMs);
  }
}

async function listProviders(run: Run, agent: WireAgent): Promise<Provider[] | string> {
  const outcome = await agent.call("providers/list", {}, run.timeoutMs);
  const providers = field(outcome, "providers");
  return Array.isArray(providers) ? (providers as Provider[]) : `providers/list: ${describeOutcome(outcome)}`;
}

async function checkProvidersSet(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.providers-set";
  const before = await listProviders(run, agent);
  if (typeof before === "string") return run.fail(id, before);
  const target = before.find((p) => p.current?.baseUrl && p.supported.includes(p.current.apiType));
  if (!target?.current) return run.skip(id, "no enabled provider to reconfigure");
  const original = target.current;
  const changed = `${original.baseUrl.replace(/\/+$/, "")}/agentkit-check`;
  const set = await agent.call("providers/set", { providerId: target.providerId, apiType: original.apiType, baseUrl: changed, headers: {} }, run.timeoutMs);
  if (set.kind !== "result") return run.fail(id, `providers/set of ${target.providerId}: ${describeOutcome(set)}`);
  const after = await listProviders(run, agent);
  const now = typeof after === "string" ? undefined : after.find((p) => p.providerId === target.providerId)?.current;
  // Restore the route (the headers the agent had are not reported, so they cannot be restored).
  await agent.call("providers/set", { providerId: target.providerId, apiType: original.apiType, baseUrl: original.baseUrl, headers: {} }, run.timeoutMs);
  if (typeof after === "string") return run.fail(id, `after providers/set, ${after}`);
  if (now?.baseUrl !== changed || now.apiType !== original.apiType) return run.fail(id, `providers/list after providers/set reports ${JSON.stringify(now ?? null)}; expected {apiType: "${original.apiType}", baseUrl: "${changed}"}`);
  const unknown = await agent.call("providers/set", { providerId: UNKNOWN_PROVIDER, apiType: original.apiType, baseUrl: changed, headers: {} }, run.timeoutMs);
  if (unknown.kind !== "error") return run.fail(id, `providers/set of an unknown provider id was accepted: ${describeOutcome(unknown)}`);
  run.pass(id, `${target.providerId} rerouted to ${changed} and listed so (then restored); an unknown id → ${unknown.code ?? "error"}`);
}

async function checkProvidersDisable(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.providers-disable";
  const before = await listProviders(run, agent);
  if (typeof before === "string") return run.fail(id, before);
  const target = before.find((p) => !p.required && p.current);
  if (!target?.current) return run.skip(id, before.length === 0 ? "no provider listed" : "no optional, enabled provider (required ones must not be disabled)");
  const original = target.current;
  const disabled = await agent.call("providers/disable", { providerId: target.providerId }, run.timeoutMs);
  if (disabled.kind !== "result") return run.fail(id, `providers/disable of ${target.providerId}: ${describeOutcome(disabled)}`);
  const after = await listProviders(run, agent);
  await agent.call("providers/set", { providerId: target.providerId, apiType: original.apiType, baseUrl: original.baseUrl, headers: {} }, run.timeoutMs);
  if (typeof after === "string") return run.fail(id, `after providers/disable, ${after}`);
  const now = after.find((p) => p.providerId === target.providerId);
  if (now?.current) return run.warn(id, `answered, but providers/list still reports ${target.providerId} as current ${JSON.stringify(now.current)} after providers/disable (the reference is current: null)`);
  run.pass(id, `${target.providerId} disabled (no current config listed), then set back`);
}

async function checkLogout(run: Run, agent: WireAgent): Promise<void> {
  const id = "unstable.logout";
  const status = run.advertises("auth.status") ? async (): Promise<unknown> => field(await agent.call("auth/status", {}, run.timeoutMs), "state") : undefined;
  const before = await status?.();
  const outcome = await agent.call("logout", {}, run.timeoutMs);
  if (outcome.kind !== "result") return run.fail(id, `logout: ${describeOutcome(outcome)}`);
  if (!status) return run.pass(id, "logout answered (auth/status not advertised: the state is not checked)");
  const after = await status();
  if (before === "authenticated" && after === "authenticated") return run.fail(id, "auth/status still reports authenticated after logout");
  run.pass(id, `logout answered; auth/status ${String(before)} → ${String(after)}`);
}

const field = (outcome: CallOutcome, name: string): unknown =>
  outcome.kind === "result" && typeof outcome.value === "object" && outcome.value !== null ? (outcome.value as Record<string, unknown>)[name] : undefined;
