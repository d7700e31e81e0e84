import { ErrorCode, McpError } from "../../../protocol/errors.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isObject } from "../../../protocol/messages.js";
import { MODERN_VERSION } from "../../../protocol/versions.js";
import type { EventBus, TaskRecord, TaskStore } from "../../../store/types.js";
import type { Telemetry } from "../../../telemetry/telemetry.js";
import { principalKey } from "../../access.js";
import { createContext, type TransportContext } from "../../context.js";
import type { ChangeEvent, McpServer, RegisteredTool } from "../../mcp-server.js";
import { runTool } from "../../tools.js";
import type { AuthInfo, HandlerContext, Implementation } from "../../types.js";
import { TaskLedger } from "./task-ledger.js";
import { createTaskRecord } from "./task-record.js";
import { createTaskResult, detailedTask, isTerminal } from "./task-results.js";
import { recordTaskCreated, recordTaskRecovered } from "./task-telemetry.js";
import { TaskWorker } from "./task-worker.js";

/** Options of the tasks extension (`createMcpHandler({ tasks })`). */
export interface TaskOptions {
  /** Lifetime of a task from its creation; its record is dropped after it. @default 3_600_000 */
  ttlMs?: number;
  /** Polling interval suggested to clients. @default 1_000 */
  pollIntervalMs?: number;
  /**
   * How long a process's claim on running work lasts without renewal: after it, work abandoned
   * by a dead process is re-run (idempotent tools) or marked failed. @default 30_000
   */
  leaseMs?: number;
  /** Unfinished tasks one principal may have at once. @default 100 */
  maxActivePerPrincipal?: number;
  /** Largest stored result, in bytes of JSON; a larger one fails the task. @default 1 MiB */
  maxResultBytes?: number;
}

/** What the runner needs from its handler. */
export interface TaskHooks {
  /** Identifies this process in leases. */
  processId: string;
  /** Publishes a task's new state to listen streams of every process. */
  publish(event: ChangeEvent): void;
  onError(error: unknown): void;
  /** Spans for each run of a task's work; none when off. */
  telemetry?: Telemetry;
}

/** Runs a tool's work in a task's environment. */
type TaskWork = (ctx: HandlerContext, env: TransportContext) => Promise<JsonObject>;

/**
 * Runs tool calls as tasks (PROTOCOL §6): creates the record durably before answering, has the
 * work run in this process ({@link TaskWorker}), and applies `tasks/get`, `tasks/update` and
 * `tasks/cancel` from any process, recovering work whose process stopped.
 */
export class TaskRunner {
  readonly #server: McpServer;
  readonly #ledger: TaskLedger;
  readonly #worker: TaskWorker;
  readonly #processId: string;
  readonly #options: Required<TaskOptions>;

  constructor(
    server: McpServer,
    store: TaskStore,
    bus: EventBus,
    hooks: TaskHooks,
    options: TaskOptions = {},
  ) {
    this.#server = server;
    this.#processId = hooks.processId;
    this.#options = {
      ttlMs: options.ttlMs ?? 3_600_000,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      leaseMs: options.leaseMs ?? 30_000,
      maxActivePerPrincipal: options.maxActivePerPrincipal ?? 100,
      maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    };
    this.#ledger = new TaskLedger(store, hooks.publish);
    this.#worker = new TaskWorker(this.#ledger, bus, {
      processId: hooks.processId,
      leaseMs: this.#options.leaseMs,
      maxResultBytes: this.#options.maxResultBytes,
      onError: hooks.onError,
      telemetry: hooks.telemetry,
    });
  }

  /**
   * Runs a tool call as a task: from the start (`taskStart: "call"`), or from when the handler
   * calls `ctx.startTask()`. Resolves to the CreateTaskResult, or to the handler's own result
   * when it finished without starting a task.
   */
  async run(
    tool: RegisteredTool,
    args: JsonObject,
    ctx: HandlerContext,
    env: TransportContext,
    work: TaskWork,
  ): Promise<JsonObject> {
    if ((tool.options.taskStart ?? "call") === "call") {
      const { record, taskEnv } = await this.#begin(tool, args, env);
      const taskCtx = createContext(
        taskEnv,
        {
          id: ctx.requestId,
          method: "tools/call",
          params: { name: tool.options.name, arguments: args },
        },
        undefined,
        {},
      );
      this.#worker.settle(record, tool.options.name, () => work(taskCtx, taskEnv));
      return createTaskResult(record);
    }
    let started: ((result: JsonObject) => void) | undefined;
    const created = new Promise<JsonObject>((resolve) => {
      started = resolve;
    });
    let task: TaskRecord | undefined;
    env.startTask = async () => {
      if (task) return true;
      const begun = await this.#begin(tool, args, env);
      task = begun.record;
      // From here on the handler runs as the task: inputs through the store, cancel aborts it.
      env.abort = begun.taskEnv.abort;
      env.request = begun.taskEnv.request;
      env.send = begun.taskEnv.send;
      env.closeStream = undefined;
      started!(createTaskResult(task));
      return true;
    };
    const outcome = work(ctx, env);
    const first = await Promise.race([
      outcome.then((result) => ({ result })),
      created.then((handle) => ({ handle })),
    ]);
    if ("result" in first) return first.result;
    // Begun before the task was, the handler's own spans stay under the request's span.
    this.#worker.settle(task!, tool.options.name, () => outcome);
    return first.handle;
  }

  /** `tasks/get`: the task's detailed state; abandoned work is recovered first. */
  async get(id: string, env: TransportContext): Promise<JsonObject> {
    let record = await this.#ledger.owned(id, principalKey(env.auth));
    if (!isTerminal(record.status) && (record.leaseUntil ?? Infinity) < Date.now()) {
      const recovered = await this.#recover(record, env.app);
      if (recovered) recordTaskRecovered(env.operation, recovered);
      record = recovered ?? (await this.#ledger.owned(id, principalKey(env.auth)));
    }
    return { resultType: "complete", ...detailedTask(record) };
  }

  /** `tasks/update`: records answers to outstanding input requests and wakes the work. */
  async update(id: string, responses: JsonObject, env: TransportContext): Promise<JsonObject> {
    const record = await this.#ledger.owned(id, principalKey(env.auth));
    if (isTerminal(record.status)) return { resultType: "complete" };
    const changed = await this.#ledger.mutate(id, (current) => {
      // Unknown, answered or superseded keys are ignored (spec: task update requests).
      const keys = Object.keys(responses).filter(
        (key) => key in current.inputRequests && isObject(responses[key]),
      );
      if (keys.length === 0 || isTerminal(current.status)) return undefined;
      for (const key of keys) {
        current.inputResponses[key] = responses[key]!;
        delete current.inputRequests[key];
      }
      if (Object.keys(current.inputRequests).length === 0) {
        current.status = "working";
        delete current.statusMessage;
      }
      return current;
    });
    if (changed) await this.#worker.signal({ id, t: "input" });
    return { resultType: "complete" };
  }

  /** `tasks/cancel`: marks the task cancelled and stops its work, wherever it runs. */
  async cancel(id: string, env: TransportContext): Promise<JsonObject> {
    await this.#ledger.owned(id, principalKey(env.auth));
    const cancelled = await this.#ledger.mutate(id, (current) => {
      if (isTerminal(current.status)) return undefined;
      current.status = "cancelled";
      current.statusMessage = "Cancelled by the client";
      current.inputRequests = {};
      return current;
    });
    if (cancelled) await this.#worker.signal({ id, t: "cancel" });
    return { resultType: "complete" };
  }

  /** Resolves once no task's work runs in this process, or after `ms`. */
  whenIdle(ms: number): Promise<void> {
    return this.#worker.whenIdle(ms);
  }

  /** Stops this process's work, releasing its tasks to the other processes. */
  close(): Promise<void> {
    return this.#worker.close();
  }

  /** Creates the record (durably: `tasks/get` resolves before the client sees the handle). */
  async #begin(
    tool: RegisteredTool,
    args: JsonObject,
    env: TransportContext,
  ): Promise<{ record: TaskRecord; taskEnv: TransportContext }> {
    const record = createTaskRecord(tool, args, env, {
      ...this.#options,
      processId: this.#processId,
    });
    if (!(await this.#ledger.create(record, this.#options.maxActivePerPrincipal))) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Too many unfinished tasks (at most ${this.#options.maxActivePerPrincipal}); wait for some to finish`,
      );
    }
    recordTaskCreated(env.operation, record);
    return { record, taskEnv: this.#worker.start(record, env) };
  }

  /** Work whose lease ran out: re-run it here when it may run twice, else mark it failed. */
  async #recover(stale: TaskRecord, app: unknown): Promise<TaskRecord | undefined> {
    const request = stale.request;
    const tool =
      request && typeof request.name === "string"
        ? this.#server.tools.get(request.name)
        : undefined;
    if (!request || !tool) {
      return this.#ledger.mutate(stale.id, (current) => {
        if (isTerminal(current.status) || current.leaseUntil !== stale.leaseUntil) return undefined;
        current.status = "failed";
        current.error = {
          code: ErrorCode.InternalError,
          message: "The task was abandoned: the process running it stopped",
        };
        current.statusMessage = String(current.error.message);
        current.inputRequests = {};
        delete current.leaseUntil;
        return current;
      });
    }
    const claimed = await this.#ledger.mutate(stale.id, (current) => {
      if (isTerminal(current.status) || current.leaseUntil !== stale.leaseUntil) return undefined;
      current.owner = this.#processId;
      current.leaseUntil = Date.now() + this.#options.leaseMs;
      current.status = "working";
      current.statusMessage = "Restarted after the process running it stopped";
      current.inputRequests = {};
      return current;
    });
    if (!claimed) return undefined;
    const args = isObject(request.arguments) ? request.arguments : {};
    const env = this.#worker.start(claimed, {
      protocolVersion: MODERN_VERSION,
      clientCapabilities: isObject(request.capabilities) ? request.capabilities : {},
      clientInfo: request.clientInfo as Implementation | undefined,
      auth: request.auth as AuthInfo | undefined,
      // Not stored with the task: the app context of the request that found it abandoned.
      app,
    });
    const ctx = createContext(
      env,
      {
        id: `task:${claimed.id}`,
        method: "tools/call",
        params: { name: tool.options.name, arguments: args },
      },
      undefined,
      {},
    );
    this.#worker.settle(claimed, tool.options.name, () => runTool(tool, args, ctx, env));
    return claimed;
  }
}
