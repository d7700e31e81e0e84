import { TASKS_EXTENSION } from "../../../protocol/extensions.js";
import type { JsonObject } from "../../../protocol/messages.js";
import type { ClientExtension, ExtensionRequest } from "../../extension.js";
import type { McpClientOptions } from "../../options.js";
import type { Era } from "../../types.js";
import { awaitTask, invalidTask, type TaskLoop } from "./await-task.js";

/**
 * The tasks extension's client side (ext-tasks): declared on `tools/call` and the `tasks/*`
 * methods of the modern era unless `tasks: false`, it follows a created task to its result.
 * Legacy sessions never declare it, so their calls block.
 */
export class TasksExtension implements ClientExtension {
  readonly id = TASKS_EXTENSION;
  readonly #enabled: boolean;

  constructor(options: McpClientOptions) {
    this.#enabled = options.tasks !== false;
  }

  /** `{}` on the methods that take part (ext-tasks: capability negotiation). */
  declaredOn(method: string, era: Era): JsonObject | undefined {
    if (!this.#enabled || era !== "modern") return undefined;
    return method === "tools/call" || method.startsWith("tasks/") ? {} : undefined;
  }

  /** A created task is polled to its result; one the request was not offered is refused. */
  follow(result: JsonObject, request: ExtensionRequest): Promise<JsonObject> | undefined {
    if (result.resultType !== "task") return undefined;
    // Only a request that declared the extension may get a task (ext-tasks: capability negotiation).
    if (request.method !== "tools/call" || !this.declaredOn(request.method, request.era)) {
      const refused = `The server answered ${request.method} with a task it was not offered`;
      return Promise.reject(invalidTask(refused));
    }
    return awaitTask(result, taskLoop(request));
  }
}

/**
 * Follows a task by its `taskId` (as `onTask` saw it) from a fresh `tasks/get` to its result:
 * a restarted app picks up where it left off.
 */
export async function followTask(taskId: string, request: ExtensionRequest): Promise<JsonObject> {
  const loop = taskLoop(request);
  const state = await loop.send("tasks/get", { taskId }, request.options.signal);
  return awaitTask(state, loop);
}

/** The polling loop of one request's task; it stops following when the client closes. */
function taskLoop(request: ExtensionRequest): TaskLoop {
  const { options, closing } = request;
  const name = request.method === "tools/call" ? request.params.name : undefined;
  const loop: TaskLoop = {
    send: (method, params, signal) => request.send(method, params, signal),
    handlers: request.handlers,
    signal: options.signal ? AbortSignal.any([options.signal, closing]) : closing,
    detach: closing,
  };
  if (typeof name === "string") loop.name = name;
  if (options.onTask) loop.onTask = options.onTask;
  return loop;
}
