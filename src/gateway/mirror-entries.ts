import type { McpClient } from "../client/client.js";
import type { CompletionRef } from "../client/completion.js";
import { isObject, type JsonObject } from "../protocol/messages.js";
import type { McpServer, Registration } from "../server/mcp-server.js";
import type {
  Completer,
  HandlerContext,
  PromptArgument,
  PromptOptions,
  PromptReturn,
  ResourceOptions,
  ResourceReturn,
  ResourceTemplateOptions,
  ToolOptions,
} from "../server/types.js";
import { parseUriTemplate } from "../server/uri-template.js";
import type { Send } from "./forward.js";

/** How mirrored entries reach the upstream. */
export interface Forwarding {
  /** Forwards one request; `asks` when the upstream may ask the client for input meanwhile. */
  request(ctx: HandlerContext, send: Send, asks: boolean): Promise<JsonObject>;
  /** Whether the upstream completes arguments (`completions` capability), now. */
  completes(): boolean;
}

/** The kinds of list the gateway mirrors, each with the field that keys its entries. */
export const KINDS = {
  tools: "name",
  prompts: "name",
  resources: "uri",
  templates: "uriTemplate",
} as const;

/** One of the mirrored lists. */
export type Kind = keyof typeof KINDS;

/** Reads every page of one of the upstream's lists, bypassing the client's cache. */
export async function listOf(client: McpClient, kind: Kind): Promise<JsonObject[]> {
  const options = { fresh: true, timeoutMs: 0 };
  switch (kind) {
    case "tools":
      return (await client.tools(options)).map((tool) => tool.definition);
    case "prompts":
      return client.prompts(options);
    case "resources":
      return client.resources(options);
    case "templates":
      return client.resourceTemplates(options);
  }
}

/** Registers one listed entry on `server`, its handler forwarding upstream; throws if refused. */
export function register(
  server: McpServer,
  kind: Kind,
  listed: JsonObject,
  via: Forwarding,
): Registration {
  switch (kind) {
    case "tools":
      return registerTool(server, listed, via);
    case "prompts":
      return registerPrompt(server, listed, via);
    case "resources":
      return registerResource(server, listed, via);
    case "templates":
      return registerTemplate(server, listed, via);
  }
}

function registerTool(server: McpServer, listed: JsonObject, via: Forwarding): Registration {
  // `execution` announces the legacy tasks of its upstream, which this server does not run.
  const { name, inputSchema, outputSchema, execution: _, ...rest } = listed;
  const tool = String(name);
  const options = {
    ...rest,
    name: tool,
    // The upstream checks what it is given: schemas are advertised as it wrote them.
    validate: false,
    ...(isObject(inputSchema) ? { input: inputSchema } : {}),
    ...(isObject(outputSchema) ? { output: outputSchema } : {}),
  } as ToolOptions;
  return server.tool(options, async (args, ctx) => {
    const send: Send = (client, request) => client.callTool(tool, args, request);
    const result = await via.request(ctx, send, true);
    // A result without content would be read as a plain value and wrapped as text.
    return Array.isArray(result.content) ? result : { ...result, content: [] };
  });
}

function registerPrompt(server: McpServer, listed: JsonObject, via: Forwarding): Registration {
  const name = String(listed.name);
  const args = Array.isArray(listed.arguments) ? listed.arguments.filter(isObject) : undefined;
  const options = {
    ...listed,
    name,
    ...(args && {
      arguments: args.map(
        (argument): PromptArgument => ({
          ...(argument as unknown as PromptArgument),
          complete: completer(via, { type: "ref/prompt", name }, String(argument.name)),
        }),
      ),
    }),
  } as PromptOptions;
  return server.prompt(options, async (values, ctx) => {
    const send: Send = (client, request) => client.getPrompt(name, values, request);
    return (await via.request(ctx, send, true)) as PromptReturn;
  });
}

function registerResource(server: McpServer, listed: JsonObject, via: Forwarding): Registration {
  const options = { ...listed, uri: String(listed.uri) } as unknown as ResourceOptions;
  return server.resource(options, (uri, ctx) => read(via, uri, ctx));
}

function registerTemplate(server: McpServer, listed: JsonObject, via: Forwarding): Registration {
  const uriTemplate = String(listed.uriTemplate);
  const ref: CompletionRef = { type: "ref/resource", uri: uriTemplate };
  const complete: Record<string, Completer> = {};
  for (const variable of parseUriTemplate(uriTemplate).variables) {
    complete[variable] = completer(via, ref, variable);
  }
  const options = { ...listed, uriTemplate, complete } as unknown as ResourceTemplateOptions;
  return server.resourceTemplate(options, (uri, _variables, ctx) => read(via, uri, ctx));
}

async function read(via: Forwarding, uri: string, ctx: HandlerContext): Promise<ResourceReturn> {
  const send: Send = (client, request) => client.readResource(uri, request);
  return (await via.request(ctx, send, true)) as ResourceReturn;
}

/** Completes an argument upstream, when the upstream completes at all (none otherwise). */
function completer(via: Forwarding, ref: CompletionRef, name: string): Completer {
  return async (value, { arguments: context, ctx }) => {
    if (!via.completes()) return [];
    const params: JsonObject = { ref, argument: { name, value } };
    if (Object.keys(context).length > 0) params.context = { arguments: context };
    const send: Send = (client, request) => client.request("completion/complete", params, request);
    const { completion } = await via.request(ctx, send, false);
    const values = isObject(completion) ? completion.values : undefined;
    return Array.isArray(values) ? values.filter((v): v is string => typeof v === "string") : [];
  };
}
