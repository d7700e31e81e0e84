/** A JSON value, as YAML's core schema yields one. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/**
 * The part of YAML 1.2 that skill frontmatter is written in: block mappings and sequences by
 * indentation, plain, quoted and block (`|`, `>`) scalars, flow collections, comments; plain
 * scalars resolved by the core schema (null, booleans, numbers). Anchors, aliases, tags and
 * complex keys are refused with a {@link YamlError} rather than misread.
 */
export class YamlError extends Error {
  override name = "YamlError";
}

interface Line {
  indent: number;
  text: string;
}

/** How deep collections may nest: deeper frontmatter is refused, not read on the stack. */
const MAX_DEPTH = 64;

function checkDepth(depth: number): void {
  if (depth > MAX_DEPTH) throw new YamlError(`Collections nested deeper than ${MAX_DEPTH} levels`);
}

/** Sets `map[key]` as an own field, even for `__proto__` (an assignment would set the prototype). */
function setField(map: Record<string, JsonValue>, key: string, value: JsonValue): void {
  if (Object.hasOwn(map, key)) throw new YamlError(`Duplicate key: ${key}`);
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

const NULL = /^(?:null|Null|NULL|~|)$/;
const INT = /^[-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/;

/** A plain scalar's value under the core schema. */
function resolvePlain(text: string): JsonValue {
  if (NULL.test(text)) return null;
  if (/^(?:true|True|TRUE)$/.test(text)) return true;
  if (/^(?:false|False|FALSE)$/.test(text)) return false;
  if (INT.test(text) || FLOAT.test(text)) return Number(text);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return Number.parseInt(text.slice(2), 16);
  if (/^0o[0-7]+$/.test(text)) return Number.parseInt(text.slice(2), 8);
  if (/^[&*!|>%@`]/.test(text)) throw new YamlError(`Unsupported YAML: ${text}`);
  return text;
}

const ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  "\t": "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\x85",
  _: "\xa0",
};

/** The string a double-quoted scalar's inside (quotes removed) stands for. */
function unescapeDouble(inside: string): string {
  return inside.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)/g, (_, code) => {
    if (code.length > 1) return String.fromCodePoint(Number.parseInt(code.slice(1), 16));
    const escaped = ESCAPES[code];
    if (escaped === undefined) throw new YamlError(`Invalid escape \\${code}`);
    return escaped;
  });
}

/** Reads one quoted scalar at `start` of `text`: its value and where it ends. */
function readQuoted(text: string, start: number): { value: string; end: number } {
  const quote = text[start];
  let i = start + 1;
  let raw = "";
  while (i < text.length) {
    const char = text[i]!;
    if (quote === "'" && char === "'") {
      if (text[i + 1] === "'") {
        raw += "'";
        i += 2;
        continue;
      }
      return { value: raw, end: i + 1 };
    }
    if (quote === '"' && char === "\\") {
      raw += text.slice(i, i + 2);
      i += 2;
      continue;
    }
    if (quote === '"' && char === '"') return { value: unescapeDouble(raw), end: i + 1 };
    raw += char;
    i++;
  }
  throw new YamlError("Unterminated quoted scalar");
}

/** Reads a flow collection or scalar at `start` (inside `[...]` or `{...}` when `inFlow`). */
function readFlow(
  text: string,
  start: number,
  inFlow: boolean,
  depth = 0,
): { value: JsonValue; end: number } {
  let i = start;
  while (text[i] === " ") i++;
  const char = text[i];
  if (char === '"' || char === "'") return readQuoted(text, i);
  if (char === "[" || char === "{") {
    checkDepth(depth + 1);
    const close = char === "[" ? "]" : "}";
    const items: JsonValue[] = [];
    const map: Record<string, JsonValue> = {};
    i++;
    for (;;) {
      while (text[i] === " ") i++;
      if (text[i] === close) return { value: char === "[" ? items : map, end: i + 1 };
      const item = readFlow(text, i, true, depth + 1);
      i = item.end;
      while (text[i] === " ") i++;
      if (char === "{") {
        if (text[i] !== ":") throw new YamlError("Expected : in a flow mapping");
        const value = readFlow(text, i + 1, true, depth + 1);
        setField(map, String(item.value), value.value);
        i = value.end;
      } else items.push(item.value);
      while (text[i] === " ") i++;
      if (text[i] === ",") i++;
      else if (text[i] !== close) throw new YamlError(`Unterminated flow collection`);
    }
  }
  const stop = inFlow ? /[,\]}]|: |:$/ : /$/;
  const rest = text.slice(i);
  const match = stop.exec(rest);
  const length = match ? match.index : rest.length;
  return { value: resolvePlain(rest.slice(0, length).trim()), end: i + length };
}

/** Removes a trailing ` # comment` from a line that holds no quote. */
function stripComment(text: string): string {
  const at = text.search(/(^|\s)#/);
  return at < 0 ? text : text.slice(0, at).trimEnd();
}

/** A recursive-descent reader over the frontmatter's lines. */
class BlockReader {
  #at = 0;
  constructor(private readonly lines: Line[]) {}

  /** The next line that is neither blank nor a comment, without consuming it. */
  peek(): Line | undefined {
    while (this.#at < this.lines.length) {
      const line = this.lines[this.#at]!;
      if (line.text !== "" && !line.text.startsWith("#")) return line;
      this.#at++;
    }
    return undefined;
  }

  /** The value of the block that starts at the next line, indented `indent`. */
  block(indent: number, depth = 0): JsonValue {
    const line = this.peek();
    if (!line || line.indent < indent) return null;
    checkDepth(depth + 1);
    return /^-( |$)/.test(line.text)
      ? this.#sequence(line.indent, depth + 1)
      : this.#mapping(line.indent, depth + 1);
  }

  #mapping(indent: number, depth: number): Record<string, JsonValue> {
    const map: Record<string, JsonValue> = {};
    for (let line = this.peek(); line && line.indent === indent; line = this.peek()) {
      if (/^-( |$)/.test(line.text)) break;
      const key = this.#key(line.text);
      this.#at++;
      setField(map, key.name, this.#value(key.rest, indent, true, depth));
    }
    return map;
  }

  #sequence(indent: number, depth: number): JsonValue[] {
    const items: JsonValue[] = [];
    for (let line = this.peek(); line && line.indent === indent; line = this.peek()) {
      if (!/^-( |$)/.test(line.text)) break;
      const rest = line.text.slice(1).trimStart();
      if (/^[^"'[{]*?:( |$)/.test(rest) || /^["'][^"']*["']:( |$)/.test(rest)) {
        // A mapping that starts on the dash's line: read it as if the dash were a space.
        const offset = line.text.length - rest.length;
        this.lines[this.#at] = { indent: indent + offset, text: rest };
        checkDepth(depth + 1);
        items.push(this.#mapping(indent + offset, depth + 1));
        continue;
      }
      this.#at++;
      items.push(this.#value(rest, indent, false, depth));
    }
    return items;
  }

  #key(text: string): { name: string; rest: string } {
    if (text.startsWith('"') || text.startsWith("'")) {
      const quoted = readQuoted(text, 0);
      if (text[quoted.end] !== ":") throw new YamlError(`Expected : after key in: ${text}`);
      return { name: quoted.value, rest: text.slice(quoted.end + 1).trim() };
    }
    // Greedy to the first colon, then trimmed (a lazy name before \s* backtracked quadratically).
    const match = /^([^#:[\]{},?&*!|>'"%@`][^:]*):(?: +(.*)|$)/.exec(text);
    if (!match) throw new YamlError(`Expected a mapping key in: ${text.slice(0, 80)}`);
    return { name: match[1]!.trimEnd(), rest: (match[2] ?? "").trim() };
  }

  /** A value after `key:` or `- `: inline, a block scalar, or a nested block. */
  #value(rest: string, indent: number, inMapping: boolean, depth: number): JsonValue {
    const inline = rest.startsWith('"') || rest.startsWith("'") ? rest : stripComment(rest);
    if (inline === "") {
      const next = this.peek();
      const nestedSequence = inMapping && next?.indent === indent && /^-( |$)/.test(next.text);
      const nested = next && (next.indent > indent || nestedSequence);
      return nested ? this.block(next.indent, depth) : null;
    }
    if (/^[|>]/.test(inline)) return this.#blockScalar(inline, indent);
    const value = readFlow(this.#continued(inline, indent), 0, false, depth);
    return value.value;
  }

  /** An inline value with its continuation lines (deeper than `indent`) folded in. */
  #continued(inline: string, indent: number): string {
    let text = inline;
    const flow = /^[[{]/.test(inline);
    for (let line = this.peek(); line && line.indent > indent; line = this.peek()) {
      // A plain scalar cannot go on with a key: YAML refuses "mapping values" there.
      if (!flow && /:( |$)/.test(line.text)) throw new YamlError(`Unexpected key in: ${line.text}`);
      text += ` ${stripComment(line.text)}`;
      this.#at++;
    }
    return text;
  }

  #blockScalar(header: string, indent: number): string {
    const match = /^([|>])([-+]?)\s*(#.*)?$/.exec(header);
    if (!match) throw new YamlError(`Unsupported block scalar header: ${header}`);
    const body: Line[] = [];
    while (this.#at < this.lines.length) {
      const line = this.lines[this.#at]!;
      if (line.text !== "" && line.indent <= indent) break;
      body.push(line);
      this.#at++;
    }
    const first = body.find((line) => line.text !== "");
    const depth = first ? first.indent : 0;
    const lines = body.map((line) =>
      line.text === "" ? "" : " ".repeat(line.indent - depth) + line.text,
    );
    while (lines.length > 0 && lines[lines.length - 1] === "" && match[2] !== "+") lines.pop();
    const joined =
      match[1] === "|"
        ? lines.join("\n")
        : lines.reduce((text, line, i) => {
            // Folding: a break between two text lines is a space, each blank line a newline.
            if (i === 0) return line;
            const previous = lines[i - 1]!;
            if (line === "") return `${text}\n`;
            if (previous === "") return text + line;
            if (line.startsWith(" ") || previous.startsWith(" ")) return `${text}\n${line}`;
            return `${text} ${line}`;
          }, "");
    return match[2] === "-" || lines.length === 0 ? joined : `${joined}\n`;
  }
}

/**
 * Parses a YAML document of the supported subset; throws {@link YamlError} on what it does
 * not support or cannot read.
 */
export function parseYaml(text: string): JsonValue {
  if (/^ *\t/m.test(text)) {
    throw new YamlError("Tabs are not allowed for YAML indentation");
  }
  const lines = text.split(/\r?\n/).map((raw) => {
    const trimmed = raw.trimStart();
    return { indent: raw.length - trimmed.length, text: trimmed.trimEnd() };
  });
  const reader = new BlockReader(lines);
  const value = reader.block(0);
  if (reader.peek()) throw new YamlError("Unexpected indentation in YAML");
  return value;
}
