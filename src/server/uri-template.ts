/** Matches URIs against an RFC 6570 template (levels 1 to 3) and extracts its variables. */
export interface UriTemplate {
  readonly template: string;
  readonly variables: readonly string[];
  /** The variables of `uri`, or undefined when it does not match. */
  match(uri: string): Record<string, string> | undefined;
}

interface Expression {
  operator: string;
  names: string[];
}

const EXPRESSION = /\{([+#./;?&]?)([^}]+)\}/g;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function decode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

// Each operator's expansion as a pattern; captured groups are decoded afterwards.
function expressionPattern({ operator, names }: Expression): string {
  switch (operator) {
    case "+":
      return names.map(() => "([^?#]*?)").join(",");
    case "#":
      return `(?:#${names.map(() => "([^,]*?)").join(",")})?`;
    case ".":
      return names.map(() => "(?:\\.([^/?#.]*))?").join("");
    case "/":
      return names.map(() => "(?:/([^/?#]*))?").join("");
    case ";":
      return names.map((name) => `(?:;${escapeRegex(name)}(?:=([^;/?#]*))?)?`).join("");
    case "?":
    case "&":
      // Query parameters are parsed by name after matching, so their order may vary.
      return `(?:[?&]([^#]*))?`;
    default:
      return names.map(() => "([^/?#,]*?)").join(",");
  }
}

function parseQuery(query: string, names: string[], into: Record<string, string>): void {
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    if (names.includes(name)) into[name] = decode(eq === -1 ? "" : pair.slice(eq + 1));
  }
}

/** Compiles an RFC 6570 template for matching; throws on a malformed template. */
export function parseUriTemplate(template: string): UriTemplate {
  const expressions: Expression[] = [];
  let pattern = "";
  let last = 0;
  for (const found of template.matchAll(EXPRESSION)) {
    pattern += escapeRegex(template.slice(last, found.index));
    const names = (found[2] ?? "").split(",").map((name) => name.replace(/(\*|:\d+)$/, "").trim());
    if (names.some((name) => !/^[A-Za-z0-9_.%]+$/.test(name))) {
      throw new TypeError(`Invalid URI template expression: ${found[0]}`);
    }
    const expression = { operator: found[1] ?? "", names };
    expressions.push(expression);
    pattern += expressionPattern(expression);
    last = (found.index ?? 0) + found[0].length;
  }
  pattern += escapeRegex(template.slice(last));
  if (/[{}]/.test(template.replace(EXPRESSION, ""))) {
    throw new TypeError(`Invalid URI template: ${template}`);
  }
  const regex = new RegExp(`^${pattern}$`);
  const variables = expressions.flatMap((expression) => expression.names);
  return {
    template,
    variables,
    match(uri) {
      const found = regex.exec(uri);
      if (!found) return undefined;
      const values: Record<string, string> = {};
      let group = 1;
      for (const expression of expressions) {
        if (expression.operator === "?" || expression.operator === "&") {
          const query = found[group++];
          if (query !== undefined) parseQuery(query, expression.names, values);
          continue;
        }
        for (const name of expression.names) {
          const value = found[group++];
          if (value !== undefined) values[name] = decode(value);
        }
      }
      return values;
    },
  };
}
