/**
 * Terminal control characters: C0 but newline and tab (layout), DEL, and C1 (U+0080-U+009F,
 * which terminals may read as ESC-sequences: U+009B is CSI, U+009D is OSC).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/** DEL and C1: raw in `JSON.stringify` output, which escapes C0 only. */
const UNESCAPED_BY_JSON = /[\u007f-\u009f]/g;

const hex = (char: string) => char.charCodeAt(0).toString(16).padStart(2, "0");

/**
 * `text` with every terminal control shown as a visible `\xNN` escape, so text from a server
 * cannot clear the screen, retitle the window, write the clipboard (OSC 52) or forge a prompt.
 */
export function toPrintable(text: string): string {
  return text.replace(CONTROLS, (char) => `\\x${hex(char)}`);
}

/** `value` as JSON, DEL and C1 as `\u` escapes: parses to the same value, prints inertly. */
export function toPrintableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(UNESCAPED_BY_JSON, (char) => `\\u00${hex(char)}`);
}

/** What a command prints on stdout: JSON (exact, controls escaped as JSON) or text. */
export type Output = { json: unknown } | { text: string };

/** Prints a command's output on stdout: the one way the CLI writes to it. */
export function printOutput(output: Output): void {
  console.log("json" in output ? toPrintableJson(output.json) : toPrintable(output.text));
}

/** Prints a message (progress, warning, error, prompt) on stderr, controls escaped. */
export function printMessage(text: string): void {
  console.error(toPrintable(text));
}
