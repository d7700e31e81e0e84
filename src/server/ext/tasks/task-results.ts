import type { JsonObject } from "../../../protocol/messages.js";
import type { TaskRecord, TaskStatus } from "../../../store/types.js";

const TERMINAL: ReadonlySet<TaskStatus> = new Set(["completed", "failed", "cancelled"]);

/** True for `completed`, `failed` and `cancelled`: nothing changes a task after them. */
export function isTerminal(status: TaskStatus): boolean {
  return TERMINAL.has(status);
}

/** The `Task` fields every shape shares (ext-tasks: Task). */
function base(record: TaskRecord): JsonObject {
  const task: JsonObject = {
    taskId: record.id,
    status: record.status,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  return task;
}

/** `CreateTaskResult`: the flat seed state, without result, error or input requests. */
export function createTaskResult(record: TaskRecord): JsonObject {
  return { resultType: "task", ...base(record) };
}

/** `DetailedTask`: the status-specific payload inlined (tasks/get, notifications/tasks). */
export function detailedTask(record: TaskRecord): JsonObject {
  const task = base(record);
  if (record.status === "input_required") task.inputRequests = record.inputRequests;
  if (record.status === "completed" && record.result) task.result = record.result;
  if (record.status === "failed" && record.error) task.error = record.error;
  return task;
}
