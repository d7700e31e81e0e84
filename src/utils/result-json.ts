// JSON.stringify on Node 20 and 22 (V8 11-12) looks `toJSON` up along the prototype chain of
// every object it meets and escapes every key anew: about 6 k instructions for a one-block text
// result, a quarter of what the mount spends on a call beyond a bare responder. Most results are
// a `content` array of blocks whose fields are strings, with a few more fields of the result;
// those are written here, each string checked by a short loop and each known key written as a
// constant. Anything else is written by JSON.stringify, value by value, so the text is the same
// as JSON.stringify's for every input (test/utils/result-json.test.ts compares them).

/** The field of nearly every modern result. */
const COMPLETE = '"resultType":"complete"';
const NEXT_COMPLETE = `,${COMPLETE}`;

/** Longer strings go to JSON.stringify, whose one call costs less than this loop would. */
const LOOP_LIMIT = 128;

/** Whether JSON.stringify writes `text` as it is, in quotes: short, with nothing it escapes. */
function isPlain(text: string): boolean {
  if (text.length > LOOP_LIMIT) return false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    // What JSON.stringify escapes: quote, backslash, controls, and any surrogate (a lone one
    // becomes \uXXXX; a pair is left to it, as the loop cannot tell them apart cheaply).
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff))
      return false;
  }
  return true;
}

/** `text` as a JSON string, as JSON.stringify writes it. */
function quoted(text: string): string {
  return isPlain(text) ? `"${text}"` : JSON.stringify(text);
}

/**
 * The text of one field: a string or boolean here, anything else by JSON.stringify (undefined
 * for what it leaves out, as a function), or `false` for a value whose own `toJSON` would be
 * called with its key, which JSON.stringify called on the value alone would not pass.
 */
function valueText(value: unknown): string | undefined | false {
  if (typeof value === "string") return quoted(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "object" && value !== null && "toJSON" in value) return false;
  return JSON.stringify(value);
}

/** A content block's text, or `false` where JSON.stringify must write the whole result. */
function blockText(block: unknown): string | undefined | false {
  if (typeof block !== "object" || block === null || Array.isArray(block)) return valueText(block);
  const plain = plainText(block);
  if (plain !== undefined) return `{"type":"text","text":"${plain}"}`;
  if ("toJSON" in block) return false;
  const fields = block as Record<string, unknown>;
  let text: string | undefined;
  for (const key of Object.keys(fields)) {
    // The common keys by name: a named load, and a constant key.
    const value = valueText(
      key === "type" ? fields.type : key === "text" ? fields.text : fields[key],
    );
    if (value === false) return false;
    if (value === undefined) continue;
    const field =
      key === "type"
        ? `"type":${value}`
        : key === "text"
          ? `"text":${value}`
          : `${quoted(key)}:${value}`;
    text = text === undefined ? field : `${text},${field}`;
  }
  return text === undefined ? "{}" : `{${text}}`;
}

/** The text of `{ type: "text", text }` with nothing in it to escape, else undefined. */
function plainText(block: object): string | undefined {
  if ("toJSON" in block) return undefined;
  const fields = block as Record<string, unknown>;
  if (fields.type !== "text") return undefined;
  const text = fields.text;
  if (typeof text !== "string" || !isPlain(text)) return undefined;
  const keys = Object.keys(fields);
  return keys.length === 2 && keys[0] === "type" && keys[1] === "text" ? text : undefined;
}

/** The `content` field's text, or `false` where JSON.stringify must write the whole result. */
function contentField(content: unknown): string | undefined | false {
  if (!Array.isArray(content) || "toJSON" in content) {
    const value = valueText(content);
    return typeof value === "string" ? `"content":${value}` : value;
  }
  // A tool's text, the most common content: one piece, with no pieces to join.
  const first: unknown = content[0];
  if (content.length === 1 && typeof first === "object" && first !== null) {
    const text = plainText(first);
    if (text !== undefined) return `"content":[{"type":"text","text":"${text}"}]`;
  }
  let text = "";
  for (let i = 0; i < content.length; i++) {
    const block = blockText(content[i]);
    if (block === false) return false;
    // An array writes null where JSON.stringify leaves a field out.
    const item = block ?? "null";
    text = i === 0 ? item : `${text},${item}`;
  }
  return `"content":[${text}]`;
}

/**
 * The fields of `result` as JSON text without the braces (`""` for none), written as
 * JSON.stringify writes them; `skip` names a key left out. Undefined where JSON.stringify must
 * write the whole result instead (an array, a value with its own `toJSON`). The caller checks
 * `result` itself for `toJSON`.
 */
export function resultFields(result: Record<string, unknown>, skip?: string): string | undefined {
  if (Array.isArray(result)) return undefined;
  let text = "";
  for (const key of Object.keys(result)) {
    if (key === skip) continue;
    let field: string | undefined | false;
    if (key === "content") field = contentField(result.content);
    else {
      const value = key === "resultType" ? result.resultType : result[key];
      if (value === "complete" && key === "resultType") {
        text = text === "" ? COMPLETE : text + NEXT_COMPLETE;
        continue;
      }
      const written = valueText(value);
      field = typeof written === "string" ? `${quoted(key)}:${written}` : written;
    }
    if (field === false) return undefined;
    if (field === undefined) continue;
    text = text === "" ? field : `${text},${field}`;
  }
  return text;
}
