import { ErrorCode, isMcpError } from "../protocol/errors.js";
import { findHeaderParams, type HeaderParam, HeaderParamError } from "../protocol/header-params.js";
import type { JsonObject } from "../protocol/messages.js";
import { headerParamValues } from "./header-params.js";
import type { McpClientOptions } from "./options.js";
import { Tool, type ToolCaller } from "./tool.js";
import type { CallToolResult, RequestOptions, ToolDefinition } from "./types.js";

/** Options of a `tools/call`: a request's, and headers that replace the mirrored ones. */
export type CallToolOptions = RequestOptions & { headers?: Record<string, string> };

/**
 * The tools a client listed: one {@link Tool} per definition, and each tool's `x-mcp-header`
 * parameters, mirrored into headers when it is called (spec: streamable-http, custom headers).
 */
export class ToolCatalog {
  /** The Tool made of each definition listed (null: excluded). */
  readonly #tools = new WeakMap<ToolDefinition, Tool | null>();
  /** The `x-mcp-header` parameters of each tool last listed, by server name. */
  readonly #headerParams = new Map<string, HeaderParam[]>();
  readonly #options: McpClientOptions;
  /** Only modern HTTP carries header parameters. */
  readonly #mirrorsHeaders: boolean;
  readonly #call: ToolCaller;
  readonly #warn: (message: string) => void;

  constructor(
    options: McpClientOptions,
    mirrorsHeaders: boolean,
    call: ToolCaller,
    warn: (message: string) => void,
  ) {
    this.#options = options;
    this.#mirrorsHeaders = mirrorsHeaders;
    this.#call = call;
    this.#warn = warn;
  }

  /** The Tools of a listing; a tool whose `x-mcp-header` annotations break the rules is left out. */
  toTools(definitions: readonly ToolDefinition[]): Tool[] {
    const tools: Tool[] = [];
    for (const definition of definitions) {
      // A cached listing hands back the same definitions: their Tools (and compiled schemas)
      // are reused, and an excluded tool is warned about once.
      let tool = this.#tools.get(definition);
      if (tool === undefined) {
        tool = this.#toTool(definition);
        this.#tools.set(definition, tool);
      }
      if (tool) tools.push(tool);
    }
    return tools;
  }

  /** The call's options with the tool's header parameters, unless the caller gave headers. */
  withHeaders(name: string, args: JsonObject, options: CallToolOptions): CallToolOptions {
    const headerParams = this.#headerParams.get(name);
    return options.headers || !headerParams
      ? options
      : { ...options, headers: headerParamValues(headerParams, args) };
  }

  /**
   * True when a call failed on headers mirrored from a listing the tool's schema has since
   * left behind: listing again and retrying once may mend it.
   */
  isStaleListing(name: string, error: unknown, options: CallToolOptions): boolean {
    if (!(isMcpError(error) && error.code === ErrorCode.HeaderMismatch)) return false;
    return !options.headers && this.#headerParams.has(name);
  }

  #toTool(definition: ToolDefinition): Tool | null {
    if (this.#mirrorsHeaders) {
      try {
        this.#headerParams.set(definition.name, findHeaderParams(definition.inputSchema ?? {}));
      } catch (error) {
        if (!(error instanceof HeaderParamError)) throw error;
        this.#warn(`Tool ${definition.name} excluded: ${error.message}`);
        return null;
      }
    }
    return new Tool(definition, this.#options, this.#call, this.#warn);
  }
}

/** A `tools/call` result with its `content` always an array. */
export function asCallToolResult(result: JsonObject): CallToolResult {
  return {
    ...result,
    content: Array.isArray(result.content) ? result.content : [],
  } as CallToolResult;
}
