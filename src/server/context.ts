import { ErrorCode, McpError } from "../protocol/errors.js";
import type { JsonObject, JsonRpcNotification, RequestId } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { LOG_LEVELS, type LogLevel } from "../protocol/versions.js";
import type { ServerOperation } from "../telemetry/server-operation.js";
import type { LazyAbort } from "../utils/lazy-abort.js";
import type {
  AuthInfo,
  ElicitParams,
  Era,
  HandlerContext,
  Implementation,
  SampleParams,
} from "./types.js";

/** What the transport tells the dispatcher about one request. */
export interface TransportContext {
  era: Era;
  protocolVersion: string;
  clientCapabilities: JsonObject;
  clientInfo?: Implementation;
  /** Minimum level of log messages to send; none are sent when absent. */
  logLevel?: LogLevel;
  /** Aborted when the client cancels or goes away; its signal is built only when read. */
  abort: LazyAbort;
  auth?: AuthInfo;
  /** The app's own context for this request (the adapter's `context` function's result). */
  app?: unknown;
  /** Who sent it, for per-client caps: the principal, else the client's address, if known. */
  client?: string;
  /** Lists hold only what `auth` has the scopes for (and are then private to it). */
  hideUnauthorized?: boolean;
  sessionId?: string;
  /** Sends a notification related to this request (progress, log messages). */
  send(notification: JsonRpcNotification): void | Promise<void>;
  /**
   * Resolves once the request's stream can take more: its reader caught up with what was sent,
   * or it closed. A request that sends much at once (an `events/stream` replay) awaits it.
   */
  writable?: () => Promise<void>;
  /**
   * Sends a real server-to-client request and awaits its result (legacy era). Without it, input
   * calls use multi round-trip requests.
   */
  request?: (
    method: string,
    params: JsonObject,
    signal: AbortSignal,
    key: string,
    onSent?: (id: RequestId) => void,
  ) => Promise<JsonObject>;
  /**
   * Why this request cannot ask the client for anything, whatever it declared (a legacy request
   * without a session): input calls throw the error it builds for the capability they need.
   */
  refuseInput?: (capability: string) => Error;
  /** Turns the rest of the call into a task (see `HandlerContext.startTask`). */
  startTask?: () => Promise<boolean>;
  /** Closes the request's SSE stream early so the client polls back (legacy 2025-11-25 only). */
  closeStream?: () => void;
  /** Charges more points to the caller's rate limit; absent without one. */
  charge?: (points: number) => Promise<void>;
  /** Reports errors the client does not see in full. */
  onError?: (error: unknown) => void;
  /** The request's SERVER span and duration, which the dispatcher ends with its answer. */
  operation?: ServerOperation;
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

function requireCapability(env: TransportContext, method: string, params: JsonObject): void {
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

/** The handler context of one request: one object, its methods shared on the prototype. */
class RequestContext implements HandlerContext {
  readonly era: Era;
  readonly protocolVersion: string;
  readonly requestId: RequestId;
  readonly method: string;
  readonly meta: JsonObject;
  readonly client: { info?: Implementation; capabilities: JsonObject };
  readonly auth: AuthInfo | undefined;
  readonly app: unknown;
  readonly sessionId: string | undefined;
  readonly state: JsonObject;
  readonly #env: TransportContext;
  readonly #inputs: InputCollector | undefined;
  #lastProgress = Number.NEGATIVE_INFINITY;

  constructor(
    env: TransportContext,
    request: { id: RequestId; method: string; params: JsonObject },
    inputs: InputCollector | undefined,
    state: JsonObject,
  ) {
    this.#env = env;
    this.#inputs = inputs;
    this.era = env.era;
    this.protocolVersion = env.protocolVersion;
    this.requestId = request.id;
    this.method = request.method;
    this.meta = isObject(request.params._meta) ? request.params._meta : {};
    this.client = { info: env.clientInfo, capabilities: env.clientCapabilities };
    this.auth = env.auth;
    this.app = env.app;
    this.sessionId = env.sessionId;
    this.state = state;
  }

  get signal(): AbortSignal {
    return this.#env.abort.signal;
  }

  async progress(progress: number, total?: number, message?: string): Promise<void> {
    const progressToken = this.meta.progressToken;
    // Progress must increase (spec: patterns/progress), and never outlive the request.
    if (progressToken === undefined || progress <= this.#lastProgress || this.#env.abort.aborted)
      return;
    this.#lastProgress = progress;
    const params: JsonObject = { progressToken, progress };
    if (total !== undefined) params.total = total;
    if (message !== undefined) params.message = message;
    await this.#env.send({ jsonrpc: "2.0", method: "notifications/progress", params });
  }

  async log(level: LogLevel, data: unknown, logger?: string): Promise<void> {
    const env = this.#env;
    if (env.logLevel === undefined || env.abort.aborted) return;
    if (LOG_LEVELS.indexOf(level) < LOG_LEVELS.indexOf(env.logLevel)) return;
    const params: JsonObject = { level, data };
    if (logger !== undefined) params.logger = logger;
    await env.send({ jsonrpc: "2.0", method: "notifications/message", params });
  }

  closeStream(): void {
    this.#env.closeStream?.();
  }

  elicit(key: string, params: ElicitParams): Promise<JsonObject> {
    return this.#ask(key, "elicitation/create", params);
  }

  sample(key: string, params: SampleParams): Promise<JsonObject> {
    return this.#ask(key, "sampling/createMessage", params);
  }

  roots(key = "roots"): Promise<JsonObject> {
    return this.#ask(key, "roots/list", {});
  }

  startTask(): Promise<boolean> {
    return this.#env.startTask?.() ?? Promise.resolve(false);
  }

  charge(points: number): Promise<void> {
    return this.#env.charge?.(points) ?? Promise.resolve();
  }

  async #ask(key: string, method: string, params: JsonObject): Promise<JsonObject> {
    const env = this.#env;
    if (env.refuseInput) throw env.refuseInput(CAPABILITY_OF[method] ?? method);
    requireCapability(env, method, params);
    if (env.request) return env.request(method, params, env.abort.signal, key);
    const inputs = this.#inputs;
    if (!inputs) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `${this.method} cannot ask the client for input`,
      );
    }
    const answer = inputs.responses[key];
    if (isObject(answer) && ANSWER_SHAPE[method]?.(answer) !== false) return answer;
    inputs.pending[key] = { method, params };
    throw new InputRequiredSignal();
  }
}

/** Builds the handler context for one request. */
export function createContext(
  env: TransportContext,
  request: { id: RequestId; method: string; params: JsonObject },
  inputs: InputCollector | undefined,
  state: JsonObject,
): HandlerContext {
  return new RequestContext(env, request, inputs, state);
}
