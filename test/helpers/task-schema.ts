/**
 * JSON Schemas of the tasks extension's wire shapes, written from the ext-tasks specification
 * (repository modelcontextprotocol/ext-tasks, specification/draft/tasks.md: Task, DetailedTask,
 * CreateTaskResult, notifications/tasks), which the MCP schemas in test/fixtures/spec do not cover. They refer to the
 * 2026-07-28 schema (registered as "spec") for the shapes they share with it.
 */
const ISO = { type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}" };
const TASK_FIELDS = {
  taskId: { type: "string", minLength: 1 },
  status: { enum: ["working", "input_required", "completed", "failed", "cancelled"] },
  statusMessage: { type: "string" },
  createdAt: ISO,
  lastUpdatedAt: ISO,
  ttlMs: { anyOf: [{ type: "integer", minimum: 1 }, { type: "null" }] },
  pollIntervalMs: { type: "integer", minimum: 1 },
};
const TASK_REQUIRED = ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"];

/** One status and what it must (and must not) inline. */
function detailed(status: string, required: string[], forbidden: string[]) {
  return {
    if: { properties: { status: { const: status } } },
    // biome-ignore lint/suspicious/noThenProperty: JSON Schema's if/then keyword
    then: {
      required,
      not: forbidden.length > 0 ? { anyOf: forbidden.map((key) => ({ required: [key] })) } : {},
    },
  };
}

export const TASK_SCHEMA = {
  $id: "tasks",
  $defs: {
    CreateTaskResult: {
      type: "object",
      properties: { ...TASK_FIELDS, resultType: { const: "task" }, _meta: { type: "object" } },
      required: ["resultType", ...TASK_REQUIRED],
      not: {
        anyOf: ["result", "error", "inputRequests", "requestState", "task"].map((key) => ({
          required: [key],
        })),
      },
    },
    DetailedTask: {
      type: "object",
      properties: {
        ...TASK_FIELDS,
        inputRequests: { $ref: "spec#/$defs/InputRequests" },
        result: { $ref: "spec#/$defs/CallToolResult" },
        error: { $ref: "spec#/$defs/Error" },
      },
      required: TASK_REQUIRED,
      not: { required: ["requestState"] },
      allOf: [
        detailed("working", [], ["result", "error", "inputRequests"]),
        detailed("input_required", ["inputRequests"], ["result", "error"]),
        detailed("completed", ["result"], ["error", "inputRequests"]),
        detailed("failed", ["error"], ["result", "inputRequests"]),
        detailed("cancelled", [], ["result", "error", "inputRequests"]),
      ],
    },
    GetTaskResult: {
      allOf: [
        { $ref: "#/$defs/DetailedTask" },
        { properties: { resultType: { const: "complete" } }, required: ["resultType"] },
      ],
    },
    /** `tasks/update` and `tasks/cancel`: an empty acknowledgement. */
    TaskAck: {
      type: "object",
      properties: { resultType: { const: "complete" }, _meta: { type: "object" } },
      required: ["resultType"],
      additionalProperties: false,
    },
    TaskStatusNotification: {
      type: "object",
      properties: {
        jsonrpc: { const: "2.0" },
        method: { const: "notifications/tasks" },
        params: { $ref: "#/$defs/DetailedTask" },
      },
      required: ["jsonrpc", "method", "params"],
    },
  },
};

/** The definition each tasks method's result must match. */
export const TASK_RESULTS: Record<string, string> = {
  "tasks/get": "GetTaskResult",
  "tasks/update": "TaskAck",
  "tasks/cancel": "TaskAck",
};
