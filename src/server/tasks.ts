import { ErrorCode, invalidParams, isMcpError, McpError } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { EventBus, TaskRecord, TaskStore } from "../store/types.js";
import { LazyAbort } from "../utils/lazy-abort.js";
import { principalKey } from "./access.js";
import { createContext, type RequestEnv } from "./context.js";
import type { ChangeEvent, McpServer, RegisteredTool } from "./mcp-server.js";
import { createTaskResult, detailedTask, isTerminal } from "./task-shape.js";
import { runTool } from "./tools.js";
import type { AuthInfo, HandlerContext, Implementation } from "./types.js";

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
}

/** Runs a tool's work in a task's environment. */
type TaskWork = (ctx: HandlerContext, env: RequestEnv) => Promise<JsonObject>;

/** Work of this process: its abort, the waiters for input, its lease renewal. */
interface Running {
  abort: LazyAbort;
  waiters: Set<() => void>;
  lease: ReturnType<typeof setInterval>;
}

/** The bus message that wakes the process running a task. */
type Wake = { id: string; t: "input" | "cancel" };

const CHANNEL = "tasks";
/** Re-reads a task this often while waiting for input, in case a wake-up was lost. */
const INPUT_POLL_MS = 1_000;

function notFound(): McpError {
  // One answer for unknown, expired and another principal's tasks (spec: security).
  return invalidParams("Failed to retrieve task: Task not found");
}

/**
 * Runs tool calls as tasks (PROTOCOL §6): creates the record durably before answering, runs the
 * work in this process under a renewed lease, surfaces input requests through the store, and
 * applies `tasks/get`, `tasks/update` and `tasks/cancel` from any process.
 */
export class TaskRunner {
  readonly #server: McpServer;
  readonly #store: TaskStore;
  readonly #bus: EventBus;
  readonly #hooks: TaskHooks;
  readonly #options: Required<TaskOptions>;
  readonly #running = new Map<string, Running>();
  readonly #unsubscribe: Promise<() => Promise<void>>;
  #closing = false;

  constructor(
    server: McpServer,
    store: TaskStore,
    bus: EventBus,
    hooks: TaskHooks,
    options: TaskOptions = {},
  ) {
    this.#server = server;
    this.#store = store;
    this.#bus = bus;
    this.#hooks = hooks;
    this.#options = {
      ttlMs: options.ttlMs ?? 3_600_000,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      leaseMs: options.leaseMs ?? 30_000,
      maxActivePerPrincipal: options.maxActivePerPrincipal ?? 100,
      maxResultBytes: options.maxResultBytes ?? 1024 * 1024,
    };
    this.#unsubscribe = bus.subscribe(CHANNEL, (message) => this.#wake(message as Wake));
    this.#unsubscribe.catch(hooks.onError);
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
    env: RequestEnv,
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
      this.#settle(record, work(taskCtx, taskEnv));
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
    this.#settle(task!, outcome);
    return first.handle;
  }

  /** `tasks/get`: the task's detailed state; abandoned work is recovered first. */
  async get(id: string, env: RequestEnv): Promise<JsonObject> {
    let record = await this.#owned(id, env);
    if (!isTerminal(record.status) && (record.leaseUntil ?? Infinity) < Date.now()) {
      record = (await this.#recover(record)) ?? (await this.#owned(id, env));
    }
    return { resultType: "complete", ...detailedTask(record) };
  }

  /** `tasks/update`: records answers to outstanding input requests and wakes the work. */
  async update(id: string, responses: JsonObject, env: RequestEnv): Promise<JsonObject> {
    const record = await this.#owned(id, env);
    if (isTerminal(record.status)) return { resultType: "complete" };
    const changed = await this.#mutate(id, (current) => {
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
    if (changed) await this.#signal({ id, t: "input" });
    return { resultType: "complete" };
  }

  /** `tasks/cancel`: marks the task cancelled and stops its work, wherever it runs. */
  async cancel(id: string, env: RequestEnv): Promise<JsonObject> {
    await this.#owned(id, env);
    const cancelled = await this.#mutate(id, (current) => {
      if (isTerminal(current.status)) return undefined;
      current.status = "cancelled";
      current.statusMessage = "Cancelled by the client";
      current.inputRequests = {};
      return current;
    });
    if (cancelled) await this.#signal({ id, t: "cancel" });
    return { resultType: "complete" };
  }

  /** Stops this process's work: each task is released for another process to pick up or fail. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const [id, running] of this.#running) {
      clearInterval(running.lease);
      // Released first: whichever process polls next re-runs the work or marks it failed.
      await this.#mutate(id, (current) => {
        if (isTerminal(current.status) || current.owner !== this.#hooks.processId) return undefined;
        current.leaseUntil = 0;
        return current;
      }).catch(this.#hooks.onError);
      running.abort.abort(new Error("The server is shutting down"));
    }
    this.#running.clear();
    await (await this.#unsubscribe.catch(() => async () => {}))();
  }

  /** Creates the record (durably: `tasks/get` resolves before the client sees the handle). */
  async #begin(
    tool: RegisteredTool,
    args: JsonObject,
    env: RequestEnv,
  ): Promise<{ record: TaskRecord; taskEnv: RequestEnv }> {
    const now = Date.now();
    const { ttlMs, pollIntervalMs, leaseMs } = this.#options;
    const record: TaskRecord = {
      id: crypto.randomUUID(),
      principal: principalKey(env.auth),
      status: "working",
      createdAt: now,
      lastUpdatedAt: now,
      ttlMs,
      pollIntervalMs,
      inputRequests: {},
      inputResponses: {},
      owner: this.#hooks.processId,
      leaseUntil: now + leaseMs,
      version: 1,
    };
    // Only work that may run twice is kept for a re-run after its process dies.
    if (tool.options.annotations?.idempotentHint === true) {
      const request: JsonObject = {
        name: tool.options.name,
        arguments: args,
        capabilities: env.clientCapabilities,
      };
      if (env.clientInfo) request.clientInfo = env.clientInfo as unknown as JsonObject;
      if (env.auth) {
        const { token: _never, ...auth } = env.auth;
        request.auth = auth as JsonObject;
      }
      record.request = request;
    }
    if (!(await this.#store.create(record, this.#options.maxActivePerPrincipal))) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `Too many unfinished tasks (at most ${this.#options.maxActivePerPrincipal}); wait for some to finish`,
      );
    }
    return { record, taskEnv: this.#taskEnv(record, env) };
  }

  /** The environment the work sees: no stream to write to, input through the task. */
  #taskEnv(
    record: TaskRecord,
    from: Pick<RequestEnv, "protocolVersion" | "clientCapabilities" | "clientInfo" | "auth">,
  ): RequestEnv {
    const abort = new LazyAbort();
    const running: Running = {
      abort,
      waiters: new Set(),
      lease: setInterval(() => void this.#renew(record.id), this.#options.leaseMs / 3),
    };
    (running.lease as { unref?: () => void }).unref?.();
    this.#running.set(record.id, running);
    return {
      era: "modern",
      protocolVersion: from.protocolVersion,
      clientCapabilities: from.clientCapabilities,
      clientInfo: from.clientInfo,
      auth: from.auth,
      abort,
      // Progress and log messages are not carried by tasks (spec: task status notifications).
      send: () => undefined,
      request: (method, params, signal, key) => this.#ask(record.id, key, method, params, signal),
      onError: this.#hooks.onError,
    };
  }

  /** An input call of the work: asked through the task, answered by `tasks/update`. */
  async #ask(
    id: string,
    key: string,
    method: string,
    params: JsonObject,
    signal: AbortSignal,
  ): Promise<JsonObject> {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const record = await this.#store.get(id);
      if (!record || isTerminal(record.status)) throw new Error("The task has ended");
      const answer = record.inputResponses[key];
      if (isObject(answer)) return answer;
      if (!(key in record.inputRequests)) {
        await this.#mutate(id, (current) => {
          if (isTerminal(current.status) || key in current.inputResponses) return undefined;
          current.inputRequests[key] = { method, params };
          current.status = "input_required";
          return current;
        });
      }
      await this.#waitForInput(id, signal);
    }
  }

  #waitForInput(id: string, signal: AbortSignal): Promise<void> {
    const running = this.#running.get(id);
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        running?.waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, INPUT_POLL_MS);
      running?.waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Stores the work's outcome, unless the task ended first (cancelled, expired). */
  #settle(record: TaskRecord, outcome: Promise<JsonObject>): void {
    const finish = async (patch: Pick<TaskRecord, "status" | "result" | "error">) => {
      // Shutting down: the work was released, not finished.
      if (this.#closing) return;
      const running = this.#running.get(record.id);
      if (running) clearInterval(running.lease);
      this.#running.delete(record.id);
      await this.#mutate(record.id, (current) => {
        if (isTerminal(current.status) || current.owner !== this.#hooks.processId) return undefined;
        Object.assign(current, patch);
        current.inputRequests = {};
        delete current.leaseUntil;
        if (patch.status === "failed") current.statusMessage = String(patch.error?.message);
        return current;
      });
    };
    outcome
      .then((result) => {
        if (JSON.stringify(result).length > this.#options.maxResultBytes)
          return finish({
            status: "failed",
            error: { code: ErrorCode.InternalError, message: "The task's result is too large" },
          });
        // Inlined as the request's own result would be: a 2026-07-28 CallToolResult.
        return finish({ status: "completed", result: { resultType: "complete", ...result } });
      })
      .catch((error: unknown) => {
        if (this.#running.get(record.id)?.abort.aborted === false || isMcpError(error)) {
          const known = isMcpError(error)
            ? error
            : new McpError(ErrorCode.InternalError, "Internal error");
          if (!isMcpError(error)) this.#hooks.onError(error);
          return finish({ status: "failed", error: known.toJSON() as JsonObject });
        }
        // Aborted: cancelled or shutting down; the record already says which.
        return finish({
          status: "failed",
          error: { code: ErrorCode.InternalError, message: "Aborted" },
        });
      })
      .catch(this.#hooks.onError);
  }

  /** Work whose lease ran out: re-run it here when it may run twice, else mark it failed. */
  async #recover(stale: TaskRecord): Promise<TaskRecord | undefined> {
    const request = stale.request;
    const tool =
      request && typeof request.name === "string"
        ? this.#server.tools.get(request.name)
        : undefined;
    if (!request || !tool) {
      return this.#mutate(stale.id, (current) => {
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
    const claimed = await this.#mutate(stale.id, (current) => {
      if (isTerminal(current.status) || current.leaseUntil !== stale.leaseUntil) return undefined;
      current.owner = this.#hooks.processId;
      current.leaseUntil = Date.now() + this.#options.leaseMs;
      current.status = "working";
      current.statusMessage = "Restarted after the process running it stopped";
      current.inputRequests = {};
      return current;
    });
    if (!claimed) return undefined;
    const args = isObject(request.arguments) ? request.arguments : {};
    const env = this.#taskEnv(claimed, {
      protocolVersion: "2026-07-28",
      clientCapabilities: isObject(request.capabilities) ? request.capabilities : {},
      clientInfo: request.clientInfo as Implementation | undefined,
      auth: request.auth as AuthInfo | undefined,
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
    this.#settle(claimed, runTool(tool, args, ctx, env));
    return claimed;
  }

  async #renew(id: string): Promise<void> {
    try {
      const renewed = await this.#mutate(
        id,
        (current) => {
          if (isTerminal(current.status) || current.owner !== this.#hooks.processId)
            return undefined;
          current.leaseUntil = Date.now() + this.#options.leaseMs;
          return current;
        },
        false,
      );
      if (renewed) return;
      const record = await this.#store.get(id);
      // Gone, ended or taken over: stop the work.
      if (!record || isTerminal(record.status) || record.owner !== this.#hooks.processId) {
        const running = this.#running.get(id);
        running?.abort.abort(new Error("The task has ended"));
      }
    } catch (error) {
      this.#hooks.onError(error);
    }
  }

  /** The task when it exists and belongs to the caller; "not found" otherwise. */
  async #owned(id: string, env: RequestEnv): Promise<TaskRecord> {
    const record = await this.#store.get(id);
    if (!record || record.principal !== principalKey(env.auth)) throw notFound();
    return record;
  }

  /**
   * Applies `change` by compare-and-set, retrying when another write came first; resolves to
   * the stored record, or undefined when `change` declined or the task is gone.
   */
  async #mutate(
    id: string,
    change: (current: TaskRecord) => TaskRecord | undefined,
    announce = true,
  ): Promise<TaskRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.#store.get(id);
      if (!current) return undefined;
      const next = change(structuredClone(current));
      if (!next) return undefined;
      next.version = current.version + 1;
      next.lastUpdatedAt = Math.max(Date.now(), current.lastUpdatedAt);
      if (await this.#store.replace(next, current.version)) {
        const inputsChanged =
          Object.keys(next.inputRequests).join() !== Object.keys(current.inputRequests).join();
        if (announce && (next.status !== current.status || inputsChanged))
          this.#hooks.publish({
            kind: "task",
            taskId: id,
            principal: next.principal,
            task: detailedTask(next),
          });
        return next;
      }
    }
    throw new Error(`Task ${id}: too many concurrent writes`);
  }

  async #signal(wake: Wake): Promise<void> {
    this.#wake(wake);
    await this.#bus.publish(CHANNEL, wake).catch(this.#hooks.onError);
  }

  #wake(message: Wake): void {
    const running = this.#running.get(message.id);
    if (!running) return;
    if (message.t === "cancel") running.abort.abort(new Error("The task was cancelled"));
    for (const waiter of [...running.waiters]) waiter();
  }
}
