import type { AuthMethod } from "@agentclientprotocol/sdk";
import { RequestError } from "@agentclientprotocol/sdk/unstable";
import type { Env } from "../../model/index.js";
import { credentialStatus, parseModelSpec } from "../../model/index.js";
import { DEFAULT_PRINCIPAL } from "./principal.js";

/**
 * How an agent handles ACP authentication: the methods it advertises in `initialize`, the
 * `authenticate` request, and whether prompts may run (else they answer `-32000`). Each call
 * names the calling connection's principal: one principal's logout or key is never another's.
 */
export interface AcpAuthentication {
  /** Advertised as `authMethods`. */
  readonly methods: readonly AuthMethod[];
  /** Answers `authenticate`: resolve to accept; throw a `RequestError` to refuse. */
  authenticate(methodId: string, principal?: string): void | Promise<void>;
  /** Why a prompt cannot run yet (sent with `-32000`), or `undefined` when it can. */
  promptBlocker(principal?: string): string | undefined;
  /** Answers `logout` (advertised as `auth.logout` when present): stop using the credential. */
  logout?(principal?: string): void | Promise<void>;
  /** Answers the unstable `auth/status` (advertised as `auth.status` when present); no side effects. */
  status?(principal?: string): AcpAuthStatus;
  /**
   * Takes the missing credential from the human on the agent's own loopback page (URL-mode
   * elicitation), so the secret never passes through the editor or the model. Used when a prompt
   * is blocked and the client advertises `elicitation.url`; without it such prompts answer -32000.
   */
  credentialEntry?: AcpCredentialEntry;
}

/** A credential the human can type on the agent's key page. */
export interface AcpCredentialEntry {
  /** What is asked for, shown in the elicitation message and on the page. */
  label: string;
  /** Keeps the secret (in memory) and lifts the prompt block; `logout` forgets it. */
  store(secret: string, principal?: string): void | Promise<void>;
}

/** Where a key typed on the key page is kept: memory only, never the environment or disk. */
export interface ApiKeySlot {
  value: string | undefined;
}

/** The unstable `auth/status` answer (also sent as `auth/status_update` when it changes). */
export interface AcpAuthStatus {
  state: "authenticated" | "unauthenticated" | "not_required" | "unknown";
  accounts?: { label: string; active?: boolean }[];
}

/** The id of the "API key from the environment" method. */
export const ENV_API_KEY_METHOD_ID = "env-api-key";

/**
 * Options of `envApiKeyAuthentication`: where the key is looked for, and the slot a key typed on the key page is kept
 * in.
 */
export interface EnvApiKeyAuthOptions {
  /** Read on every check (default `process.env`). */
  env?: () => Env;
  /** An extra variable that holds the key (`createModelAdapter`'s `apiKeyEnv`). */
  apiKeyEnv?: string;
  /**
   * Holds a key typed on the key page (offered as `credentialEntry`); it wins over the
   * environment, and `logout` clears it. Share it with the model (`createModelAdapter`'s
   * `apiKey`) so calls use it; a function gives each principal its own. Default: a slot per principal.
   */
  keySlot?: ApiKeySlot | ((principal: string) => ApiKeySlot);
}

/**
 * "API key from the environment" for a model spec such as `anthropic:claude-sonnet-4-5`. A
 * provider that needs a key advertises one method (`env-api-key`) whose description names the
 * variable to set; `authenticate` re-checks the environment and succeeds only when a key is
 * there; prompts answer `-32000` until then. Providers without a key requirement (the demo
 * model, Ollama, openai-compatible servers) advertise nothing and never block. A key typed on
 * the key page (`credentialEntry`) is kept in `keySlot` and counts like one from the environment.
 */
export function envApiKeyAuthentication(spec: string, options: EnvApiKeyAuthOptions = {}): AcpAuthentication {
  const parsed = parseModelSpec(spec);
  const readEnv = options.env ?? ((): Env => process.env);
  const own = new Map<string, ApiKeySlot>();
  const given = options.keySlot;
  const slot = (principal = DEFAULT_PRINCIPAL): ApiKeySlot =>
    typeof given === "function" ? given(principal) : (given ?? own.get(principal) ?? own.set(principal, { value: undefined }).get(principal)!);
  const status = (principal?: string) => credentialStatus(parsed, { env: readEnv(), apiKey: slot(principal).value, ...(options.apiKeyEnv ? { apiKeyEnv: options.apiKeyEnv } : {}) });
  const first = status();
  if (!first.needsKey) return noAuthentication();
  const envVar = first.envVar ?? "AGENTKIT_API_KEY";
  const alternatives = envVar === "AGENTKIT_API_KEY" ? "" : " (or AGENTKIT_API_KEY)";
  const howTo = `Set ${envVar}${alternatives} in the environment the editor starts the agent with, then restart the agent.`;
  const method: AuthMethod = {
    id: ENV_API_KEY_METHOD_ID,
    name: `${envVar} from the environment`,
    description: `The model ${parsed.spec} needs an API key. ${howTo}`,
  };
  // After `logout` the key is not used by that principal (prompts answer -32000) until it authenticates again.
  const loggedOut = new Set<string>();
  const missing = (principal?: string): string | undefined => {
    const now = status(principal);
    return now.problem === undefined ? undefined : `${parsed.spec} needs an API key and ${envVar}${alternatives} is not set. ${howTo}`;
  };
  const blocker = (principal = DEFAULT_PRINCIPAL): string | undefined =>
    loggedOut.has(principal) ? `logged out: ${parsed.spec}'s key (${envVar}) is not used until the client authenticates again with method "${ENV_API_KEY_METHOD_ID}".` : missing(principal);
  return {
    methods: [method],
    authenticate(methodId: string, principal = DEFAULT_PRINCIPAL): void {
      if (methodId !== ENV_API_KEY_METHOD_ID) throw unknownMethod(methodId, [ENV_API_KEY_METHOD_ID]);
      const problem = missing(principal);
      if (problem !== undefined) throw RequestError.authRequired({ authMethods: [ENV_API_KEY_METHOD_ID], envVar }, problem);
      loggedOut.delete(principal);
    },
    promptBlocker: blocker,
    logout(principal = DEFAULT_PRINCIPAL): void {
      loggedOut.add(principal);
      slot(principal).value = undefined;
    },
    status(principal?: string): AcpAuthStatus {
      const ok = blocker(principal) === undefined;
      return { state: ok ? "authenticated" : "unauthenticated", accounts: [{ label: `${envVar} (${parsed.spec})`, active: ok }] };
    },
    credentialEntry: {
      label: `${envVar} for ${parsed.spec}`,
      store(secret: string, principal = DEFAULT_PRINCIPAL): void {
        slot(principal).value = secret;
        loggedOut.delete(principal);
      },
    },
  };
}

/** Advertises no method; `authenticate` refuses any id; prompts always run. */
export function noAuthentication(): AcpAuthentication {
  return {
    methods: [],
    authenticate(methodId: string): void {
      throw unknownMethod(methodId, []);
    },
    promptBlocker: () => undefined,
    status: () => ({ state: "not_required" }),
  };
}

function unknownMethod(methodId: string, known: string[]): RequestError {
  const list = known.length === 0 ? "this agent advertises no authentication methods" : `known methods: ${known.join(", ")}`;
  return RequestError.invalidParams({ methodId, authMethods: known }, `unknown authentication method "${methodId}"; ${list}`);
}
