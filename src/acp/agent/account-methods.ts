import type { AgentContext } from "@agentclientprotocol/sdk/unstable";
import * as acp from "@agentclientprotocol/sdk/unstable";
import type { Logger } from "../../core/index.js";
import { errorMessage } from "../../core/index.js";
import type { GroupHandlers } from "../methods.js";
import type { AcpAuthentication } from "./auth.js";
import type { AcpProviders } from "./providers.js";

/** What the account methods of one connection need. */
export interface AccountSettings {
  authentication: AcpAuthentication;
  /** Set when the providers/* methods are on (the runtime has providers and the unstable feature is on). */
  providers: AcpProviders | undefined;
  /** The unstable auth/status feature is on. */
  authStatus: boolean;
  logger: Logger;
}

export type AuthStatus = ReturnType<NonNullable<AcpAuthentication["status"]>>;

/**
 * The principal's account on one connection: authenticate, logout, auth/status (and the
 * auth/status_update it sends on a change), providers/*. Each handler is given only when
 * configured, so the method table registers and advertises exactly those.
 */
export class AccountMethods {
  readonly #settings: AccountSettings;
  readonly #principal: string;
  /** The SDK context from initialize, for auth/status_update. */
  #context: AgentContext | undefined;
  /** The auth status this connection last saw or sent (auth/status_update only on a change). */
  #authState: string | undefined;

  constructor(settings: AccountSettings, principal: string) {
    this.#settings = settings;
    this.#principal = principal;
  }

  /** Called by initialize: the status the client starts from. */
  initialized(context: AgentContext): void {
    this.#context = context;
    this.#authState = JSON.stringify(this.status());
  }

  /** The unstable auth status, when the authentication reports one and the feature is on. */
  status(): AuthStatus | undefined {
    return this.#settings.authStatus ? this.#settings.authentication.status?.(this.#principal) : undefined;
  }

  handlers(): GroupHandlers<"account"> {
    const { authentication, providers, logger } = this.#settings;
    const principal = this.#principal;
    const handlers: GroupHandlers<"account"> = {};
    handlers[acp.methods.agent.authenticate] = async ({ params }) => {
      await authentication.authenticate(params.methodId, principal);
      await this.changed();
      return {};
    };
    if (authentication.logout) {
      handlers[acp.methods.agent.logout] = async () => {
        await authentication.logout?.(principal);
        await this.changed();
        return {};
      };
    }
    if (this.status() !== undefined) handlers[acp.methods.agent.auth.status] = () => ({ ...this.status()! });
    if (providers) {
      handlers[acp.methods.agent.providers.list] = () => ({ providers: providers.list(principal) });
      handlers[acp.methods.agent.providers.set] = async ({ params }) => {
        await providers.set(params.providerId, { apiType: params.apiType, baseUrl: params.baseUrl, headers: params.headers ?? {} }, principal);
        logger.info("provider configured", { providerId: params.providerId, apiType: params.apiType, baseUrl: params.baseUrl });
        return {};
      };
      handlers[acp.methods.agent.providers.disable] = async ({ params }) => {
        await providers.disable(params.providerId, principal);
        return {};
      };
    }
    return handlers;
  }

  /** auth/status_update after logout / authenticate / a stored key, when the status differs from the last one. */
  async changed(): Promise<void> {
    const status = this.status();
    if (status === undefined || !this.#context) return;
    const key = JSON.stringify(status);
    if (key === this.#authState) return;
    this.#authState = key;
    await this.#context.notify(acp.methods.client.auth.statusUpdate, { ...status }).catch((error: unknown) => {
      this.#settings.logger.debug("auth/status_update not sent", { error: errorMessage(error) });
    });
  }
}
