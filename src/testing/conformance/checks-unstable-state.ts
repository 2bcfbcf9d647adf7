import { acpSchema, ADVERTISED } from "./spec-ref.js";
import type { ConformanceCheck } from "./types.js";

const STATEFUL =
  "Unstable (schema.unstable.json): binds only an agent that advertises the capability. " +
  ADVERTISED +
  " The check changes the agent's state (it signs out / reroutes a provider, then restores what it can), so it runs only with --change-state (`changeState`), last, in a launch of its own.";

/** The unstable methods that change what the agent is configured with; run only on request. */
export const unstableStateChecks: readonly ConformanceCheck[] = [
  {
    id: "unstable.providers-set",
    group: "initialize",
    severity: "must",
    title: "providers/set (when advertised) replaces a provider's routing: providers/list then reports it as current",
    spec: acpSchema(
      "schema.unstable.json",
      "SetProviderRequest",
      "Replaces the full configuration for one provider ID. (ProviderInfo.current: \"Current effective non-secret routing config.\")",
      STATEFUL,
    ),
    fix: "Apply providers/set to the provider and report the new apiType/baseUrl as `current` in providers/list; refuse an unknown providerId with an error.",
  },
  {
    id: "unstable.providers-disable",
    group: "initialize",
    severity: "must",
    title: "providers/disable (when advertised) of an optional provider is answered; providers/list then reporting no current config for it is the reference",
    spec: acpSchema(
      "schema.unstable.json",
      "DisableProviderRequest",
      "Provider ID to disable. (ProviderInfo.current: \"Null or omitted means provider is disabled.\")",
      `${STATEFUL} Skipped when every listed provider is required (clients must not disable those). The schema gives disable no further semantics: an agent that answers and then reports the provider's own (native) routing as current — Claude's reading: "ends ACP ownership … and restores the agent's native routing state" — is reported, not failed.`,
    ),
    fix: "Clear the provider's routing on providers/disable and report `current: null` for it in providers/list.",
  },
  {
    id: "unstable.logout",
    group: "initialize",
    severity: "must",
    title: "logout (when advertised as auth.logout) answers a result; with auth/status advertised, the state is no longer authenticated",
    spec: acpSchema("schema.unstable.json", "LogoutRequest", "Terminates the current authenticated session.", STATEFUL),
    fix: "Answer logout with {} after forgetting the active credential (auth/status then reports unauthenticated), or stop advertising auth.logout.",
  },
];
