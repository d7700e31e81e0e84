/**
 * The param each method mirrors into the `Mcp-Name` request header (spec: transports, standard
 * headers; ext-tasks: Streamable HTTP routing headers).
 */
export const MCP_NAME_PARAM: Readonly<Record<string, "name" | "uri" | "taskId">> = {
  "tools/call": "name",
  "prompts/get": "name",
  "resources/read": "uri",
  "tasks/get": "taskId",
  "tasks/update": "taskId",
  "tasks/cancel": "taskId",
};
