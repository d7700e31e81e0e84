import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import { TASK_RESULTS, TASK_SCHEMA } from "./task-schema.js";

/** The MCP JSON Schemas, kept as test fixtures (see test/fixtures/spec/README.md). */
const SPEC_DIR = fileURLToPath(new URL("../fixtures/spec/", import.meta.url));

type Era = "modern" | "legacy";
const FILES: Record<Era, string> = {
  modern: "schema-2026-07-28.json",
  legacy: "schema-2025-11-25.json",
};

const validators = new Map<string, ValidateFunction>();
const ajvs = new Map<Era, Ajv2020>();

function ajvFor(era: Era): Ajv2020 {
  let ajv = ajvs.get(era);
  if (!ajv) {
    const schema = JSON.parse(readFileSync(SPEC_DIR + FILES[era], "utf8"));
    ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
    ajv.addSchema(schema, "spec");
    if (era === "modern") ajv.addSchema(TASK_SCHEMA);
    ajvs.set(era, ajv);
  }
  return ajv;
}

function validatorFor(era: Era, def: string): ValidateFunction {
  const key = `${era}:${def}`;
  let validate = validators.get(key);
  if (!validate) {
    const [file, name] = def.includes("#") ? def.split("#") : ["spec", def];
    validate = ajvFor(era).getSchema(`${file}#/$defs/${name}`);
    if (!validate) throw new Error(`No definition ${def} in the ${era} schema`);
    validators.set(key, validate);
  }
  return validate;
}

/** Throws unless `value` matches the named definition of the era's schema. */
export function assertSchema(era: Era, def: string, value: unknown): void {
  const validate = validatorFor(era, def);
  if (!validate(value)) {
    const errors = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath} ${e.message}`);
    throw new Error(
      `${def} (${era}) rejected ${JSON.stringify(value).slice(0, 400)}: ${errors.join("; ")}`,
    );
  }
}

const MODERN_RESULTS: Record<string, string> = {
  "server/discover": "DiscoverResult",
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
  "prompts/list": "ListPromptsResult",
  "prompts/get": "GetPromptResult",
  "resources/list": "ListResourcesResult",
  "resources/templates/list": "ListResourceTemplatesResult",
  "resources/read": "ReadResourceResult",
  "completion/complete": "CompleteResult",
  "subscriptions/listen": "SubscriptionsListenResult",
};

const MODERN_ERRORS: Record<number, string> = {
  [-32020]: "HeaderMismatchError",
  [-32021]: "MissingRequiredClientCapabilityError",
  [-32022]: "UnsupportedProtocolVersionError",
};

/**
 * Validates one message the server emitted in the modern era, as precisely as the schema allows:
 * a result against its method's result type, an error against its code's error type.
 */
export function assertModernMessage(message: unknown, method: string): void {
  const record = message as Record<string, unknown>;
  if ("error" in record) {
    assertSchema("modern", "JSONRPCErrorResponse", message);
    const code = (record.error as { code: number }).code;
    const specific = MODERN_ERRORS[code];
    if (specific) assertSchema("modern", specific, message);
    return;
  }
  if ("result" in record) {
    assertSchema("modern", "JSONRPCResultResponse", message);
    const result = record.result as Record<string, unknown>;
    if (result.resultType === "input_required") {
      assertSchema("modern", "InputRequiredResult", result);
      return;
    }
    if (result.resultType === "task") {
      if (method !== "tools/call") throw new Error(`resultType "task" answered ${method}`);
      assertSchema("modern", "tasks#CreateTaskResult", result);
      return;
    }
    const taskResult = TASK_RESULTS[method];
    if (taskResult) {
      assertSchema("modern", `tasks#${taskResult}`, result);
      return;
    }
    if (result.resultType !== "complete")
      throw new Error(`Unexpected resultType ${String(result.resultType)}`);
    assertSchema("modern", MODERN_RESULTS[method] ?? "Result", result);
    return;
  }
  if (record.method === "notifications/tasks") {
    assertSchema("modern", "tasks#TaskStatusNotification", message);
    return;
  }
  assertSchema("modern", "ServerNotification", message);
}

const LEGACY_RESULTS: Record<string, string> = {
  initialize: "InitializeResult",
  ping: "EmptyResult",
  "logging/setLevel": "EmptyResult",
  "resources/subscribe": "EmptyResult",
  "resources/unsubscribe": "EmptyResult",
  "tools/list": "ListToolsResult",
  "tools/call": "CallToolResult",
  "prompts/list": "ListPromptsResult",
  "prompts/get": "GetPromptResult",
  "resources/list": "ListResourcesResult",
  "resources/templates/list": "ListResourceTemplatesResult",
  "resources/read": "ReadResourceResult",
  "completion/complete": "CompleteResult",
};

/** Validates one message the server emitted in a legacy (2025-11-25) session. */
export function assertLegacyMessage(message: unknown, method: string): void {
  const record = message as Record<string, unknown>;
  if ("error" in record) {
    assertSchema("legacy", "JSONRPCErrorResponse", message);
    return;
  }
  if ("result" in record) {
    assertSchema("legacy", "JSONRPCResultResponse", message);
    assertSchema("legacy", LEGACY_RESULTS[method] ?? "Result", record.result);
    if ("resultType" in (record.result as object))
      throw new Error("resultType leaked into a legacy result");
    return;
  }
  if ("id" in record) {
    assertSchema("legacy", "JSONRPCRequest", message);
    assertSchema("legacy", "ServerRequest", message);
    return;
  }
  assertSchema("legacy", "JSONRPCNotification", message);
  assertSchema("legacy", "ServerNotification", message);
}
