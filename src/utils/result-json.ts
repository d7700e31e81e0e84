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

/** Whether JSON.stringify would call `value`'s own `toJSON` (an object's or a BigInt's). */
export function hasToJSON(value: unknown): boolean {
  const type = typeof value;
  if (type !== "object" && type !== "function" && type !== "bigint") return false;
  return value !== null && typeof (value as { toJSON?: unknown }).toJSON === "function";
}

/**
 * The text of one value: a string or boolean here, anything else by JSON.stringify (undefined
 * for what it leaves out, as a function), or `false` for a value whose own `toJSON` would be
 * called with its key, which JSON.stringify called on the value alone would not pass.
 */
function valueText(value: unknown): string | undefined | false {
  if (typeof value === "string") return quoted(value);
  if (typeof value === "boolean") return value ? "true" : "false";
  if (hasToJSON(value)) return false;
  return JSON.stringify(value);
}

/** `"key":value`, undefined for a field JSON.stringify leaves out, `false` as for valueText. */
function fieldText(key: string, value: unknown): string | undefined | false {
  const text = valueText(value);
  if (typeof text !== "string") return text;
  // The common keys as constants.
  if (key === "type") return `"type":${text}`;
  if (key === "text") return `"text":${text}`;
  return `${quoted(key)}:${text}`;
}

/** A content block's text, each field read once, or `false` as for valueText. */
function blockText(block: unknown): string | undefined | false {
  // A box, an instance or a null-prototype object is JSON.stringify's to write. Checked here,
  // not by a shared helper, so that these loads see blocks' shapes only.
  if (typeof block !== "object" || block === null || block.constructor !== Object)
    return valueText(block);
  const fields = block as Record<string, unknown>;
  if (typeof fields.toJSON === "function") return false;
  const keys = Object.keys(fields);
  // A tool's text, the most common block: one piece.
  if (keys.length === 2 && keys[0] === "type" && keys[1] === "text") {
    const type = fields.type;
    const text = fields.text;
    if (type === "text" && typeof text === "string" && isPlain(text))
      return `{"type":"text","text":"${text}"}`;
    const first = fieldText("type", type);
    const second = fieldText("text", text);
    if (first === false || second === false) return false;
    if (first === undefined || second === undefined) return `{${first ?? second ?? ""}}`;
    return `{${first},${second}}`;
  }
  let text: string | undefined;
  for (const key of keys) {
    const field = fieldText(key, fields[key]);
    if (field === false) return false;
    if (field === undefined) continue;
    text = text === undefined ? field : `${text},${field}`;
  }
  return text === undefined ? "{}" : `{${text}}`;
}

/** The `content` field's text, or `false` where JSON.stringify must write the whole result. */
function contentField(content: unknown): string | undefined | false {
  if (!Array.isArray(content) || hasToJSON(content)) return fieldText("content", content);
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
 * write the whole result instead (an array, a box or an instance, a value with its own `toJSON`).
 * The caller checks `result` itself for `toJSON`.
 */
export function resultFields(result: Record<string, unknown>, skip?: string): string | undefined {
  // A box, an instance or a null-prototype object is JSON.stringify's to write.
  if (result.constructor !== Object) return undefined;
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
      field = fieldText(key, value);
    }
    if (field === false) return undefined;
    if (field === undefined) continue;
    text = text === "" ? field : `${text},${field}`;
  }
  return text;
}
