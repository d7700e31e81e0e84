import { ErrorCode, isMcpError, McpError } from "../../../protocol/errors.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { isObject } from "../../../protocol/messages.js";
import { channel, publish, subscribe } from "../../../store/channels.js";
import type { EventBus, TaskRecord } from "../../../store/types.js";
import type { Outcome } from "../../../telemetry/attributes.js";
import type { Telemetry } from "../../../telemetry/telemetry.js";
import { LazyAbort } from "../../../utils/lazy-abort.js";
import type { TransportContext } from "../../context.js";
import type { TaskLedger } from "./task-ledger.js";
import { isTerminal } from "./task-results.js";
import { TaskRunSpan } from "./task-telemetry.js";

/** What the worker needs from its handler. */
export interface WorkerHooks {
  /** Identifies this process in leases. */
  processId: string;
  leaseMs: number;
  maxResultBytes: number;
  onError(error: unknown): void;
  /** Spans for each run of a task's work; none when off. */
  telemetry?: Telemetry;
}

/** The client-facing facts a task's work runs with. */
export type WorkSource = Pick<
  TransportContext,
  "protocolVersion" | "clientCapabilities" | "clientInfo" | "auth" | "app"
>;

/** Work of this process: its abort, the waiters for input, its lease renewal. */
interface Running {
  abort: LazyAbort;
  waiters: Set<() => void>;
  lease: ReturnType<typeof setInterval>;
}

/** How a run ended: the change to its record, and what its span records. */
interface Ending {
  patch: Pick<TaskRecord, "status" | "result" | "error">;
  outcome: Outcome;
}

/** The bus message that wakes the process running a task. */
export type Wake = { id: string; t: "input" | "cancel" };

/** Where processes wake the one running a task (input answered, task cancelled). */
const CHANNEL = channel<Wake>("tasks");
/** Re-reads a task this often while waiting for input, in case a wake-up was lost. */
const INPUT_POLL_MS = 1_000;

/**
 * Runs the work of tasks in this process: an environment whose input calls go through the task
 * record, a renewed lease, the outcome stored when the work ends, and wake-ups (input answered,
 * task cancelled) heard from every process on the bus.
 */
export class TaskWorker {
  readonly #ledger: TaskLedger;
  readonly #bus: EventBus;
  readonly #hooks: WorkerHooks;
  readonly #running = new Map<string, Running>();
  readonly #unsubscribe: Promise<() => Promise<void>>;
  #closing = false;
  #idle: (() => void) | undefined;

  constructor(ledger: TaskLedger, bus: EventBus, hooks: WorkerHooks) {
    this.#ledger = ledger;
    this.#bus = bus;
    this.#hooks = hooks;
    this.#unsubscribe = subscribe(bus, CHANNEL, (message) => this.#wake(message));
    this.#unsubscribe.catch(hooks.onError);
  }

  /** Takes on a task's work here: the environment it runs in, no stream, input via the task. */
  start(record: TaskRecord, from: WorkSource): TransportContext {
    const abort = new LazyAbort();
    const running: Running = {
      abort,
      waiters: new Set(),
      lease: setInterval(() => void this.#renew(record.id), this.#hooks.leaseMs / 3),
    };
    (running.lease as { unref?: () => void }).unref?.();
    this.#running.set(record.id, running);
    return {
      era: "modern",
      protocolVersion: from.protocolVersion,
      clientCapabilities: from.clientCapabilities,
      clientInfo: from.clientInfo,
      auth: from.auth,
      app: from.app,
      abort,
      // Progress and log messages are not carried by tasks (ext-tasks: status notifications).
      send: () => undefined,
      request: (method, params, signal, key) => this.#ask(record.id, key, method, params, signal),
      onError: this.#hooks.onError,
    };
  }

  /**
   * Runs a task's work (inside its run span, with telemetry) and stores its outcome, unless the
   * task ended first (cancelled, expired, taken over).
   */
  settle(record: TaskRecord, tool: string, work: () => Promise<JsonObject>): void {
    const telemetry = this.#hooks.telemetry;
    const span = telemetry?.live ? new TaskRunSpan(telemetry, record, tool) : undefined;
    const outcome = span ? span.run(work) : work();
    outcome
      .then((result) => this.#completion(result))
      .catch((error: unknown) => this.#failure(record.id, error))
      .then(async (ending) => {
        try {
          await this.#store(record.id, ending.patch);
        } catch (error) {
          span?.end({ ...ending.outcome, exception: error });
          throw error;
        }
        span?.end(ending.outcome);
      })
      .catch(this.#hooks.onError);
  }

  /** Wakes the work of a task wherever it runs (this process included). */
  async signal(wake: Wake): Promise<void> {
    this.#wake(wake);
    await publish(this.#bus, CHANNEL, wake).catch(this.#hooks.onError);
  }

  /** Resolves once no task runs here, or after `ms` (a drain's grace). */
  whenIdle(ms: number): Promise<void> {
    if (this.#running.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#idle = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#idle = done;
    });
  }

  /** Stops this process's work: each task is released for another process to pick up or fail. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const [id, running] of this.#running) {
      clearInterval(running.lease);
      // Released first: whichever process polls next re-runs the work or marks it failed.
      await this.#ledger
        .mutate(id, (current) => {
          if (isTerminal(current.status) || current.owner !== this.#hooks.processId)
            return undefined;
          current.leaseUntil = 0;
          return current;
        })
        .catch(this.#hooks.onError);
      running.abort.abort(new Error("The server is shutting down"));
    }
    this.#running.clear();
    await (await this.#unsubscribe.catch(() => async () => {}))();
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
      const record = await this.#ledger.get(id);
      if (!record || isTerminal(record.status)) throw new Error("The task has ended");
      const answer = record.inputResponses[key];
      if (isObject(answer)) return answer;
      if (!(key in record.inputRequests)) {
        await this.#ledger.mutate(id, (current) => {
          if (isTerminal(current.status) || key in current.inputResponses) return undefined;
          current.inputRequests[key] = { method, params };
          current.status = "input_required";
          return current;
        });
      }
      await this.#waitForInput(id, signal);
    }
  }

  /** A result's ending: completed, unless too large to store. */
  #completion(result: JsonObject): Ending {
    if (JSON.stringify(result).length > this.#hooks.maxResultBytes) {
      const error = { code: ErrorCode.InternalError, message: "The task's result is too large" };
      return { patch: { status: "failed", error }, outcome: { error } };
    }
    // Inlined as the request's own result would be: a 2026-07-28 CallToolResult.
    const patch = { status: "completed" as const, result: { resultType: "complete", ...result } };
    return { patch, outcome: { result } };
  }

  /** A failure's ending: a JSON-RPC error as it is, anything else an internal error. */
  #failure(id: string, error: unknown): Ending {
    if (isMcpError(error))
      return {
        patch: { status: "failed", error: error.toJSON() as JsonObject },
        outcome: { error },
      };
    // Aborted: cancelled or taken over, and the record already says so.
    if (this.#running.get(id)?.abort.aborted !== false) {
      const aborted = { code: ErrorCode.InternalError, message: "Aborted" };
      return { patch: { status: "failed", error: aborted }, outcome: { exception: error } };
    }
    this.#hooks.onError(error);
    const internal = new McpError(ErrorCode.InternalError, "Internal error");
    const patch = { status: "failed" as const, error: internal.toJSON() as JsonObject };
    return { patch, outcome: { exception: error } };
  }

  /** Writes a run's ending to the record, unless the task ended or was taken over first. */
  async #store(id: string, patch: Ending["patch"]): Promise<void> {
    // Shutting down: the work was released, not finished.
    if (this.#closing) return;
    this.#forget(id);
    await this.#ledger.mutate(id, (current) => {
      if (isTerminal(current.status) || current.owner !== this.#hooks.processId) return undefined;
      Object.assign(current, patch);
      current.inputRequests = {};
      delete current.leaseUntil;
      if (patch.status === "failed") current.statusMessage = String(patch.error?.message);
      return current;
    });
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

  async #renew(id: string): Promise<void> {
    try {
      const renewed = await this.#ledger.mutate(
        id,
        (current) => {
          if (isTerminal(current.status) || current.owner !== this.#hooks.processId)
            return undefined;
          current.leaseUntil = Date.now() + this.#hooks.leaseMs;
          return current;
        },
        false,
      );
      if (renewed) return;
      const record = await this.#ledger.get(id);
      // Gone, ended or taken over: stop the work.
      if (!record || isTerminal(record.status) || record.owner !== this.#hooks.processId) {
        this.#running.get(id)?.abort.abort(new Error("The task has ended"));
      }
    } catch (error) {
      this.#hooks.onError(error);
    }
  }

  #forget(id: string): void {
    const running = this.#running.get(id);
    if (running) clearInterval(running.lease);
    this.#running.delete(id);
    if (this.#running.size === 0) this.#idle?.();
  }

  #wake(message: Wake): void {
    const running = this.#running.get(message.id);
    if (!running) return;
    if (message.t === "cancel") running.abort.abort(new Error("The task was cancelled"));
    for (const waiter of [...running.waiters]) waiter();
  }
}
