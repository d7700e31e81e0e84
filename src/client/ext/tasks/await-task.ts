import { ErrorCode, McpError } from "../../../protocol/errors.js";
import { isObject, type JsonObject } from "../../../protocol/messages.js";
import { type InputRequest, InputRequiredError } from "../../errors.js";
import { answerInputRequests, canAnswer } from "../../input.js";
import { sleep } from "../../sse.js";
import type { InputHandlers, Task } from "../../types.js";

/** Bounds on the server's suggested poll interval, so neither side is overwhelmed. */
const POLL_MS = { min: 50, max: 5_000, fallback: 1_000 } as const;

/** What the polling loop needs from the client. */
export interface TaskLoop {
  /** Sends `tasks/get`, `tasks/update` or `tasks/cancel` as one round trip. */
  send: (
    method: string,
    params: JsonObject,
    signal: AbortSignal | undefined,
  ) => Promise<JsonObject>;
  handlers: InputHandlers;
  signal: AbortSignal | undefined;
  /** Aborted when the client closes: the loop stops without cancelling, to be resumed later. */
  detach?: AbortSignal;
  /** The tool's name, for the `onInput` context. */
  name?: string;
  onTask?: (task: Task) => void;
}

/**
 * Follows a task from a state the server gave (the CreateTaskResult, or a `tasks/get`) to its
 * end: polls `tasks/get` at the suggested interval, answers each new input request once through
 * `onInput` and `tasks/update`, and resolves with the inlined result. `failed` throws the task's
 * JSON-RPC error, `cancelled` an AbortError. Leaving early (abort, timeout, input nothing can
 * answer) sends `tasks/cancel` first: nobody else would know to end the work. A closing
 * client only stops following: the task stays for `resumeTask`.
 */
export async function awaitTask(state: JsonObject, loop: TaskLoop): Promise<JsonObject> {
  let task = taskOf(state);
  const { taskId } = task;
  const answered = new Set<string>();
  let reported = "";
  const report = () => {
    const now = `${task.status}\n${task.statusMessage ?? ""}`;
    if (now !== reported) loop.onTask?.(task);
    reported = now;
  };
  try {
    report();
    while (!isTerminalStatus(task.status)) {
      if (task.status === "input_required") await answer(task, answered, loop);
      await sleep(pollInterval(task), loop.signal);
      task = taskOf(await loop.send("tasks/get", { taskId }, loop.signal));
      report();
    }
  } catch (error) {
    if (loop.detach?.aborted) throw error;
    // Cancellation is cooperative and its ack is all we wait for (ext-tasks: task cancellation).
    await loop.send("tasks/cancel", { taskId }, undefined).catch(() => {});
    throw error;
  }
  return outcome(task);
}

function isTerminalStatus(status: string): boolean {
  return status === "completed" || status === "failed" || status === "cancelled";
}

/** Answers the input requests not answered before, in one `tasks/update`. */
async function answer(task: Task, answered: Set<string>, loop: TaskLoop): Promise<void> {
  const requests = (isObject(task.inputRequests) ? task.inputRequests : {}) as Record<
    string,
    InputRequest
  >;
  // Keys are unique over a task's life: one seen before is the same request (ext-tasks).
  const fresh = Object.entries(requests).filter(([key]) => !answered.has(key));
  const unanswerable = fresh.find(([, request]) => !canAnswer(loop.handlers, request.method));
  if (unanswerable) {
    throw new InputRequiredError(
      `tools/call: no onInput callback answers ${unanswerable[1].method} (task ${task.taskId})`,
      "tools/call",
      requests,
    );
  }
  if (fresh.length === 0) return;
  const signal = loop.signal ?? new AbortController().signal;
  const origin = { method: "tools/call", name: loop.name, signal };
  const inputResponses = await answerInputRequests(fresh, loop.handlers, origin);
  await loop.send("tasks/update", { taskId: task.taskId, inputResponses }, loop.signal);
  for (const [key] of fresh) answered.add(key);
}

/** The result of a task that ended, or the error it ended with. */
function outcome(task: Task): JsonObject {
  if (task.status === "completed" && isObject(task.result)) return task.result;
  if (task.status === "failed") {
    const error = isObject(task.error) ? task.error : {};
    throw new McpError(
      typeof error.code === "number" ? error.code : ErrorCode.InternalError,
      typeof error.message === "string" ? error.message : `Task ${task.taskId} failed`,
      error.data,
    );
  }
  if (task.status === "cancelled") {
    const why = task.statusMessage ? `: ${task.statusMessage}` : "";
    throw new DOMException(`Task ${task.taskId} was cancelled${why}`, "AbortError");
  }
  throw invalidTask(`Task ${task.taskId} completed without a result`);
}

function pollInterval(task: Task): number {
  const ms = task.pollIntervalMs;
  if (typeof ms !== "number" || !Number.isFinite(ms)) return POLL_MS.fallback;
  return Math.min(POLL_MS.max, Math.max(POLL_MS.min, ms));
}

function taskOf(value: JsonObject): Task {
  if (typeof value.taskId !== "string" || typeof value.status !== "string") {
    throw invalidTask("The server's task has no taskId or status");
  }
  return value as unknown as Task;
}

/** A task answer the client cannot follow (ext-tasks: an invalid response). */
export function invalidTask(message: string): McpError {
  return new McpError(ErrorCode.InternalError, message);
}
