import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { LOG_LEVELS, type LogLevel } from "../protocol/versions.js";
import type { AuthInfo, Era, HandlerContext, Implementation } from "./types.js";

/** What the transport tells the dispatcher about one request. */
export interface RequestEnv {
  era: Era;
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo?: Implementation;
  /** Minimum level of log messages to send; none are sent when absent. */
  logLevel?: LogLevel;
  signal: AbortSignal;
  auth?: AuthInfo;
  sessionId?: string;
  /** Sends a notification related to this request (progress, log messages). */
  send(notification: JsonRpcNotification): void | Promise<void>;
  /**
   * Sends a real server-to-client request and awaits its result (legacy era). Without it, input
   * calls use multi round-trip requests.
   */
  request?: (method: string, params: JsonObject, signal: AbortSignal) => Promise<JsonObject>;
  /** Closes the request's SSE stream early so the client polls back (legacy 2025-11-25 only). */
  closeStream?: () => void;
  /** Reports errors the client does not see in full. */
  onError?: (error: unknown) => void;
}

/** Thrown inside a handler to end the round when an input is missing (MRTR). */
export class InputRequiredSignal extends Error {
  constructor() {
    super("Input required");
    this.name = "InputRequiredSignal";
  }
}

/** The input requests a modern round collected, keyed as the handler named them. */
export interface InputCollector {
  /** Responses known for this round (earlier rounds plus the retry's `inputResponses`). */
  responses: JsonObject;
  /** Requests for inputs not yet answered. */
  pending: JsonObject;
}

/** Minimal shape of each kind of answer; a malformed answer is asked for again (spec: mrtr). */
const ANSWER_SHAPE: Record<string, (answer: JsonObject) => boolean> = {
  "elicitation/create": (answer) =>
    ["accept", "decline", "cancel"].includes(answer.action as string),
  "sampling/createMessage": (answer) =>
    typeof answer.role === "string" && (isObject(answer.content) || Array.isArray(answer.content)),
  "roots/list": (answer) => Array.isArray(answer.roots),
};

const CAPABILITY_OF: Record<string, string> = {
  "elicitation/create": "elicitation",
  "sampling/createMessage": "sampling",
  "roots/list": "roots",
};

function requireCapability(env: RequestEnv, method: string, params: JsonObject): void {
  const capability = CAPABILITY_OF[method] ?? method;
  const declared = env.clientCapabilities[capability];
  const urlMode = method === "elicitation/create" && params.mode === "url";
  if (declared !== undefined && (!urlMode || (isObject(declared) && declared.url !== undefined))) {
    return;
  }
  const required = urlMode ? { elicitation: { url: {} } } : { [capability]: {} };
  // A legacy session cannot be asked again with other capabilities: let the tool handle it.
  if (env.era === "legacy") throw new Error(`The client does not support ${capability}`);
  throw new McpError(
    ErrorCode.MissingRequiredClientCapability,
    `The client did not declare the ${capability} capability this request needs`,
    { requiredCapabilities: required },
  );
}

/** Builds the handler context for one request. */
export function createContext(
  env: RequestEnv,
  request: { id: RequestId; method: string; params: JsonObject },
  inputs: InputCollector | undefined,
  state: JsonObject,
): HandlerContext {
  const meta = isObject(request.params._meta) ? request.params._meta : {};
  const progressToken = meta.progressToken;
  let lastProgress = Number.NEGATIVE_INFINITY;
  const minLevel = env.logLevel === undefined ? Infinity : LOG_LEVELS.indexOf(env.logLevel);

  const ask = (key: string, method: string, params: JsonObject): Promise<JsonObject> => {
    requireCapability(env, method, params);
    if (env.request) return env.request(method, params, env.signal);
    if (!inputs) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${request.method} cannot ask the client for input`,
      );
    }
    const answer = inputs.responses[key];
    if (isObject(answer) && ANSWER_SHAPE[method]?.(answer) !== false)
      return Promise.resolve(answer);
    inputs.pending[key] = { method, params };
    return Promise.reject(new InputRequiredSignal());
  };
  const guarded = (key: string, method: string, params: JsonObject): Promise<JsonObject> => {
    try {
      return ask(key, method, params);
    } catch (error) {
      return Promise.reject(error);
    }
  };

  return {
    era: env.era,
    protocolVersion: env.protocolVersion,
    requestId: request.id,
    method: request.method,
    signal: env.signal,
    meta,
    client: { info: env.clientInfo, capabilities: env.clientCapabilities },
    auth: env.auth,
    sessionId: env.sessionId,
    state,
    async progress(progress, total, message) {
      // Progress must increase (spec: patterns/progress), and never outlive the request.
      if (progressToken === undefined || progress <= lastProgress || env.signal.aborted) return;
      lastProgress = progress;
      const params: JsonObject = { progressToken, progress };
      if (total !== undefined) params.total = total;
      if (message !== undefined) params.message = message;
      await env.send({ jsonrpc: "2.0", method: "notifications/progress", params });
    },
    async log(level, data, logger) {
      if (LOG_LEVELS.indexOf(level) < minLevel || env.signal.aborted) return;
      const params: JsonObject = { level, data };
      if (logger !== undefined) params.logger = logger;
      await env.send({ jsonrpc: "2.0", method: "notifications/message", params });
    },
    closeStream: () => env.closeStream?.(),
    elicit: (key, params) => guarded(key, "elicitation/create", params),
    sample: (key, params) => guarded(key, "sampling/createMessage", params),
    roots: (key = "roots") => guarded(key, "roots/list", {}),
  };
}
