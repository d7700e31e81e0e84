import { isObject, type JsonObject } from "./messages.js";

/** A tool parameter mirrored into an `Mcp-Param-{header}` request header. */
export interface HeaderParam {
  /** The annotation's value: the `{header}` of `Mcp-Param-{header}`. */
  header: string;
  /** The `properties` keys that lead from the schema root to the parameter. */
  path: string[];
}

/**
 * The rule an `x-mcp-header` annotation breaks; `at` is the annotated schema's JSON Pointer
 * within the input schema.
 */
export type HeaderParamProblem =
  | { rule: "placement"; header: unknown; at: string }
  | { rule: "token"; header: unknown; at: string }
  | { rule: "type"; header: string; at: string }
  | { rule: "unique"; header: string; at: string; first: HeaderParam };

/** A tool's `x-mcp-header` annotations break the spec's rules, so the tool is invalid. */
export class HeaderParamError extends TypeError {
  readonly problem: HeaderParamProblem;

  constructor(problem: HeaderParamProblem) {
    super(messageOf(problem));
    this.name = "HeaderParamError";
    this.problem = problem;
  }
}

/** RFC 9110 §5.1 field-name: `1*tchar` (so never empty, never a control character). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const PRIMITIVE_TYPES = new Set(["string", "integer", "boolean"]);
/** Keywords whose values are instance data or property names, never subschemas. */
const DATA_KEYWORDS = new Set([
  "const",
  "enum",
  "default",
  "examples",
  "required",
  "dependentRequired",
]);
/** Keywords whose values map names to subschemas (the names are not schema keywords). */
const SCHEMA_MAPS = new Set([
  "properties",
  "patternProperties",
  "dependentSchemas",
  "$defs",
  "definitions",
  "dependencies",
]);

interface Visit {
  node: unknown;
  /** The `properties` chain from the root; undefined once the walk has left it. */
  path: string[] | undefined;
  at: string;
}

/**
 * Finds the `x-mcp-header` annotations of a tool's input schema and checks them against
 * spec 2026-07-28, basic/transports/streamable-http, "Custom Headers from Tool Parameters"
 * (Schema Extension; also server/tools, "x-mcp-header"): each sits on a property reached from
 * the root through `properties` keys alone, is an RFC 9110 token unique ignoring case, and
 * types its property as exactly `string`, `integer` or `boolean`. The server refuses to
 * register a tool that breaks them, the client leaves such a tool out: both call this.
 *
 * @throws {HeaderParamError} naming the first rule broken, in document order.
 * @example
 * ```ts
 * const region = { type: "string", "x-mcp-header": "Region" };
 * findHeaderParams({ type: "object", properties: { region } });
 * // [{ header: "Region", path: ["region"] }]
 * ```
 */
export function findHeaderParams(inputSchema: JsonObject): HeaderParam[] {
  const found: HeaderParam[] = [];
  // Iterative and depth-first in document order: a listed schema may nest deeper than the stack.
  const stack: Visit[] = [{ node: inputSchema, path: [], at: "" }];
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    if (isObject(visit.node)) check(visit, visit.node, found);
    const children = childrenOf(visit);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return found;
}

function check({ path, at }: Visit, node: JsonObject, found: HeaderParam[]): void {
  const header = node["x-mcp-header"];
  // JSON has no undefined: such a key never reaches a client, so it is no annotation.
  if (header === undefined) return;
  // "Anywhere else makes the annotation — and thus the tool definition — invalid": under
  // items, a composition, a conditional, $defs, or on the root, which is no property.
  if (!path || path.length === 0) throw new HeaderParamError({ rule: "placement", header, at });
  if (typeof header !== "string" || !TOKEN.test(header)) {
    throw new HeaderParamError({ rule: "token", header, at });
  }
  if (typeof node.type !== "string" || !PRIMITIVE_TYPES.has(node.type)) {
    throw new HeaderParamError({ rule: "type", header, at });
  }
  const first = found.find((entry) => entry.header.toLowerCase() === header.toLowerCase());
  if (first) throw new HeaderParamError({ rule: "unique", header, at, first });
  found.push({ header, path });
}

function childrenOf({ node, path, at }: Visit): Visit[] {
  if (Array.isArray(node)) {
    return node.map((item, index) => ({ node: item, path: undefined, at: `${at}/${index}` }));
  }
  if (!isObject(node)) return [];
  const children: Visit[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (DATA_KEYWORDS.has(key) || key === "x-mcp-header") continue;
    const here = `${at}/${pointerToken(key)}`;
    if (SCHEMA_MAPS.has(key) && isObject(value)) {
      const chain = key === "properties" ? path : undefined;
      for (const [name, child] of Object.entries(value)) {
        children.push({
          node: child,
          path: chain && [...chain, name],
          at: `${here}/${pointerToken(name)}`,
        });
      }
    } else {
      children.push({ node: value, path: undefined, at: here });
    }
  }
  return children;
}

/** RFC 6901 escaping of one reference token. */
function pointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}

function messageOf(problem: HeaderParamProblem): string {
  const where = `x-mcp-header ${JSON.stringify(problem.header)} at #${problem.at}`;
  switch (problem.rule) {
    case "placement":
      return `${where} is not on a property reachable through properties alone`;
    case "token":
      return `${where} is not a header token (RFC 9110 field-name)`;
    case "type":
      return `${where} is not on a string, integer or boolean`;
    case "unique":
      return `${where} is declared twice, ignoring case (first as ${JSON.stringify(problem.first.header)} at ${JSON.stringify(problem.first.path)})`;
  }
}
