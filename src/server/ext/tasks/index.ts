import { ErrorCode, invalidParams, McpError } from "../../../protocol/errors.js";
import { TASKS_EXTENSION } from "../../../protocol/extensions.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isObject } from "../../../protocol/messages.js";
import type { ExtensionHost, ExtensionRequest, ServerExtension } from "../../extension.js";
import { runTool } from "../../tools.js";
import { type TaskOptions, TaskRunner } from "./task-runner.js";

export type { TaskOptions };

/** True when the request's client capabilities declare the tasks extension. */
export function declaresTasks(capabilities: JsonObject): boolean {
  return (
    isObject(capabilities.extensions) && capabilities.extensions[TASKS_EXTENSION] !== undefined
  );
}

/** The `requiredCapabilities` of a -32021 error for the extension. */
const TASKS_REQUIRED = { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } };

function missingTasks(message: string): McpError {
  return new McpError(ErrorCode.MissingRequiredClientCapability, message, TASKS_REQUIRED);
}

function taskIdOf(params: JsonObject): string {
  if (typeof params.taskId !== "string" || params.taskId === "")
    throw invalidParams("taskId must be a non-empty string");
  return params.taskId;
}

/**
 * The `io.modelcontextprotocol/tasks` extension (PROTOCOL §6): tools with `taskSupport` run as
 * tasks for modern clients that declare it, and `tasks/get`, `tasks/update` and `tasks/cancel`
 * act on them. Turned off (`false`), it declares nothing and answers its methods as not found.
 */
export function tasksExtension(
  host: ExtensionHost,
  options: TaskOptions | false | undefined,
): ServerExtension {
  const runner =
    options === false
      ? undefined
      : new TaskRunner(
          host.server,
          host.store.tasks,
          host.store.bus,
          {
            processId: crypto.randomUUID(),
            publish: host.publish,
            onError: host.onError,
            telemetry: host.telemetry,
          },
          options,
        );
  /** The runner for a tasks/* request: modern era, enabled, and the extension declared. */
  const runnerFor = ({ env, era }: ExtensionRequest): TaskRunner => {
    if (!era.extensions || !runner)
      throw new McpError(ErrorCode.MethodNotFound, "Method not found: tasks are not enabled");
    if (!declaresTasks(env.clientCapabilities))
      throw missingTasks(`The client did not declare the ${TASKS_EXTENSION} extension`);
    return runner;
  };
  return {
    id: TASKS_EXTENSION,
    declaration: runner ? {} : undefined,
    methods: {
      "tasks/get": (request) => runnerFor(request).get(taskIdOf(request.params), request.env),
      "tasks/update": async (request) => {
        const responses = request.params.inputResponses;
        if (!isObject(responses)) throw invalidParams("inputResponses must be an object");
        return runnerFor(request).update(taskIdOf(request.params), responses, request.env);
      },
      "tasks/cancel": (request) => runnerFor(request).cancel(taskIdOf(request.params), request.env),
    },
    callTool({ tool, args, ctx, env, era }) {
      const support = era.extensions && runner ? tool.options.taskSupport : undefined;
      if (support === undefined) return undefined;
      if (declaresTasks(env.clientCapabilities))
        return runner!.run(tool, args, ctx, env, (toolCtx, toolEnv) =>
          runTool(tool, args, toolCtx, toolEnv),
        );
      if (support === "required")
        throw missingTasks(
          `Tool ${tool.options.name} runs only as a task: declare the ${TASKS_EXTENSION} extension`,
        );
      return undefined;
    },
    refuseListen(filter, clientCapabilities) {
      if (!filter.taskIds || (runner && declaresTasks(clientCapabilities))) return undefined;
      return missingTasks(`Task notifications need the ${TASKS_EXTENSION} extension`);
    },
    whenIdle: async (ms) => runner?.whenIdle(ms),
    close: async () => runner?.close(),
  };
}
