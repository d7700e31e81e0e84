import { invalidParams } from "../../protocol/errors.js";
import type { JsonObject, JsonRpcRequest } from "../../protocol/messages.js";
import { isObject } from "../../protocol/messages.js";
import { LEGACY_VERSIONS, type LogLevel } from "../../protocol/versions.js";
import { initializeParamsError, initializeResult, negotiateVersion } from "../initialize.js";
import { type ChangeSink, sessionWants } from "../listen-hub.js";

/** No resource subscriptions: a session not opened yet. */
const NONE: ReadonlySet<string> = new Set();
import { answerSessionMethod, isSessionMethod, type SessionMethod } from "../session-methods.js";
import type { Implementation } from "../types.js";
import type { StdioChannel } from "./channel.js";

/** stdio also serves 2024-11-05, the first revision, which never had an HTTP transport of its own. */
const STDIO_VERSIONS = [...LEGACY_VERSIONS, "2024-11-05"];

/** The one legacy session a stdio process holds after `initialize`. */
interface LegacySession {
  protocolVersion: string;
  capabilities: JsonObject;
  clientInfo?: Implementation | undefined;
  logLevel?: LogLevel;
  subscriptions: Set<string>;
}

/** Before `initialize`, legacy requests are refused; after it, they run in its session. */
type LegacyState = { phase: "new" } | { phase: "legacy"; session: LegacySession };

/**
 * The legacy era on a stdio channel: `initialize` opens (or reopens) the process's one session,
 * whose version, capabilities, log level and resource subscriptions every later request uses.
 */
export class LegacyStdio {
  readonly #channel: StdioChannel;
  #state: LegacyState = { phase: "new" };

  constructor(channel: StdioChannel) {
    this.#channel = channel;
  }

  /** Serves one legacy request: `initialize`, a session method, or a call the dispatcher answers. */
  serve(request: JsonRpcRequest): undefined {
    const channel = this.#channel;
    if (request.method === "initialize") return this.#initialize(request);
    if (this.#state.phase === "new") {
      const error = invalidParams("Send initialize first, or _meta with a protocol version");
      return channel.fail(request.id, error);
    }
    const { session } = this.#state;
    if (isSessionMethod(request.method))
      return this.#sessionMethod(session, request.method, request);
    channel.run(request, {
      era: "legacy",
      protocolVersion: session.protocolVersion,
      clientCapabilities: session.capabilities,
      clientInfo: session.clientInfo,
      logLevel: session.logLevel ?? "debug",
      request: (method, params, signal, _key, onSent) =>
        channel.request(method, params, signal, onSent),
      onError: channel.onError,
    });
  }

  #initialize(request: JsonRpcRequest): undefined {
    const channel = this.#channel;
    const params = request.params ?? {};
    const invalid = initializeParamsError(params);
    if (invalid) return channel.fail(request.id, invalid);
    const protocolVersion = negotiateVersion(params.protocolVersion, STDIO_VERSIONS);
    // The change sink reads the current session, so a second initialize needs no second sink.
    if (this.#state.phase === "new") channel.hub.add(this.#changeSink());
    this.#state = {
      phase: "legacy",
      session: {
        protocolVersion,
        capabilities: isObject(params.capabilities) ? params.capabilities : {},
        clientInfo: isObject(params.clientInfo)
          ? (params.clientInfo as unknown as Implementation)
          : undefined,
        subscriptions: new Set(),
      },
    };
    channel.write({
      jsonrpc: "2.0",
      id: request.id,
      result: initializeResult(channel.server, protocolVersion, channel.extensions),
    });
  }

  #sessionMethod(
    session: LegacySession,
    method: SessionMethod,
    request: JsonRpcRequest,
  ): undefined {
    const outcome = answerSessionMethod(method, request.params ?? {}, session);
    if ("error" in outcome) return this.#channel.fail(request.id, outcome.error);
    const { change } = outcome;
    if (change && "logLevel" in change) session.logLevel = change.logLevel;
    else if (change) session.subscriptions = new Set(change.subscriptions);
    this.#channel.write({ jsonrpc: "2.0", id: request.id, result: outcome.result });
  }

  /** The session's change events: list changes, and updates of the resources it subscribed to. */
  #changeSink(): ChangeSink {
    return {
      wants: (event) =>
        sessionWants(
          event,
          this.#state.phase === "legacy" ? this.#state.session.subscriptions : NONE,
        ),
      deliver: (message) => this.#channel.write(message),
      keepAlive: () => {},
      end: () => {},
    };
  }
}
