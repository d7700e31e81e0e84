import { invalidParams } from "../protocol/errors.js";
import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import type { McpServer } from "./mcp-server.js";
import type { Completer, HandlerContext } from "./types.js";

/**
 * `completion/complete`: the completer of a prompt argument or resource template variable, its
 * first 100 values and whether there are more (spec: server/utilities/completion).
 */
export async function complete(
  server: McpServer,
  ctx: HandlerContext,
  params: JsonObject,
): Promise<JsonObject> {
  const ref = params.ref;
  const argument = params.argument;
  if (!isObject(ref) || !isObject(argument) || typeof argument.name !== "string") {
    throw invalidParams("completion/complete needs ref and argument.name");
  }
  const context =
    isObject(params.context) && isObject(params.context.arguments) ? params.context.arguments : {};
  let completer: Completer | undefined;
  if (ref.type === "ref/prompt") {
    const prompt = typeof ref.name === "string" ? server.prompts.get(ref.name) : undefined;
    if (!prompt) throw invalidParams(`Unknown prompt: ${String(ref.name)}`);
    completer = prompt.options.arguments?.find((a) => a.name === argument.name)?.complete;
  } else if (ref.type === "ref/resource") {
    const template = typeof ref.uri === "string" ? server.templates.get(ref.uri) : undefined;
    if (!template && !(typeof ref.uri === "string" && server.resources.has(ref.uri))) {
      throw invalidParams(`Unknown resource template: ${String(ref.uri)}`);
    }
    completer = template?.options.complete?.[argument.name];
  } else {
    throw invalidParams(`Unknown completion reference type: ${String(ref.type)}`);
  }
  const value = typeof argument.value === "string" ? argument.value : "";
  const values = completer
    ? await completer(value, { arguments: context as Record<string, string>, ctx })
    : [];
  const completion: JsonObject = {
    values: values.slice(0, 100),
    total: values.length,
    hasMore: values.length > 100,
  };
  return { completion };
}
