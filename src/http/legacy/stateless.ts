import type { JsonRpcRequest } from "../../protocol/messages.js";
import { isSessionMethod } from "../../server/session-methods.js";
import type { EventLog } from "../../store/types.js";
import type { Caller } from "../caller.js";
import type { EndpointServices } from "../endpoint-services.js";
import { methodNotAllowed } from "../responses.js";
import type { McpHttpRequest, McpHttpResponse } from "../types.js";
import {
  answerInitialize,
  isAnswer,
  type LegacyMessage,
  requestIdOf,
  sessionError,
  sortMessage,
  versionHeaderError,
} from "./incoming.js";
import { type RequestHost, runLegacyRequest } from "./run.js";
import { answerOverHttp } from "./session-methods.js";
import { LegacyStream } from "./stream.js";
import type { LegacyEra } from "./types.js";

/** The version a stateless request speaks when its `MCP-Protocol-Version` header names none. */
const DEFAULT_VERSION = "2025-03-26";

/** What a session method reads when there is no session. */
const NO_SESSION = { subscriptions: [] };

/** A sessionless stream keeps no replay log: nobody can resume it (GET is not served). */
const NO_LOG: EventLog = {
  append: async () => {},
  after: async () => undefined,
  drop: async () => {},
};

/**
 * Why a legacy request without a session cannot ask the client for input: a server request
 * travels on a session's stream, and its answer is posted back to that session.
 */
function sessionlessInput(capability: string): Error {
  return new Error(
    `${capability} needs a legacy session: this endpoint serves legacy clients statelessly (legacy.stateless), so server requests are unavailable; use the 2026-07-28 protocol or a session`,
  );
}

/**
 * The legacy era without sessions, for serverless hosts: `initialize` names no session, each
 * request stands alone (its version from its header), there is no GET stream, no DELETE and no
 * server request; a notification or a reply has nothing to reach.
 */
export class StatelessLegacy implements LegacyEra {
  readonly stateless = true;
  readonly sessionsHeld = 0;
  readonly #core: EndpointServices;
  readonly #retryMs: number;

  constructor(core: EndpointServices, retryMs: number) {
    this.#core = core;
    this.#retryMs = retryMs;
  }

  post(
    req: McpHttpRequest,
    message: LegacyMessage,
    caller: Caller = {},
  ): McpHttpResponse | Promise<McpHttpResponse> {
    const wrongVersion = versionHeaderError(req, requestIdOf(message));
    if (wrongVersion) return wrongVersion;
    const sorted = sortMessage(message);
    if (isAnswer(sorted)) return sorted;
    switch (sorted.kind) {
      case "initialize":
        return answerInitialize(this.#core, sorted.request);
      case "reply":
        return sessionError(404, `No server request is waiting for id ${String(sorted.reply.id)}`);
      case "notification":
        return { status: 202, headers: {}, body: null };
      case "request":
        return this.#request(req, sorted.request, caller);
    }
  }

  async get(): Promise<McpHttpResponse> {
    return methodNotAllowed();
  }

  async delete(): Promise<McpHttpResponse> {
    return methodNotAllowed();
  }

  async handOver(): Promise<void> {}

  async close(): Promise<void> {}

  #request(
    req: McpHttpRequest,
    request: JsonRpcRequest,
    caller: Caller,
  ): McpHttpResponse | Promise<McpHttpResponse> {
    const protocolVersion = req.header("mcp-protocol-version") ?? DEFAULT_VERSION;
    // Nothing to keep a level or subscriptions in: answered, and forgotten.
    if (isSessionMethod(request.method))
      return answerOverHttp(request.method, request, NO_SESSION).response;
    return runLegacyRequest(this.#core, {
      request,
      peer: { protocolVersion, capabilities: {} },
      host: sessionlessHost(),
      caller,
      client: this.#core.clientOf(req, caller.auth),
      retryMs: this.#retryMs,
    });
  }
}

/** Where a sessionless request runs: its own stream, logged nowhere, and no server requests. */
function sessionlessHost(): RequestHost {
  return {
    openStream: () =>
      new LegacyStream({
        sessionId: "",
        id: crypto.randomUUID().replace(/-/g, "").slice(0, 16),
        log: NO_LOG,
        onError: () => {},
      }),
    finishStream: (stream) => stream.endAndLog(),
    track: () => () => {},
    refuseInput: sessionlessInput,
    done: () => {},
  };
}
