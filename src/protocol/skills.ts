import { isObject, type JsonObject } from "./messages.js";
import { parseYaml, YamlError } from "./yaml.js";

/** The skills extension's identifier, negotiated in `capabilities.extensions` (SEP-2640). */
export const SKILLS_EXTENSION = "io.modelcontextprotocol/skills";

/** The MIME type of a directory resource (SEP-2640, Directory Listing). */
export const DIRECTORY_MIME_TYPE = "inode/directory";

/** A skill name per the Agent Skills spec: 1-64 lowercase letters, digits and single hyphens. */
export const SKILL_NAME = /^(?!.*--)[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/;

/** A file of a skill with what a host needs to verify it (`skills[].resources[]`). */
export interface SkillFileEntry {
  uri: string;
  /** `sha256:` and 64 lowercase hex digits of the file's raw bytes. */
  digest: string;
  /** The file's length in bytes. */
  size: number;
}

/** One entry of `skills/list`, and the `skill` of `skills/get`. */
export interface SkillEntry {
  /** The URI of the skill's `SKILL.md`. */
  uri: string;
  /** The `SKILL.md` frontmatter, verbatim, as JSON. */
  frontmatter: JsonObject & { name: string; description: string };
  /** Every file of the skill, or `"dynamic"` when its content cannot be digested ahead. */
  resources: SkillFileEntry[] | "dynamic";
  _meta?: JsonObject;
}

/** The frontmatter: from a first `---` line to the next line that is `---` alone. */
const FRONTMATTER = /^---\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

/** A `SKILL.md` split into its frontmatter (as JSON) and body; throws on a bad frontmatter. */
export function splitSkillMd(text: string): { frontmatter: JsonObject; body: string } {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const match = FRONTMATTER.exec(source);
  if (!match) throw new YamlError("SKILL.md must begin with a --- delimited YAML frontmatter");
  const frontmatter = parseYaml(match[1] ?? "");
  if (!isObject(frontmatter)) throw new YamlError("The frontmatter must be a YAML mapping");
  return { frontmatter, body: source.slice(match[0].length) };
}

const PLAIN_STRING = /^[A-Za-z_(][^:#'"\n]*$/;

/** A YAML scalar or collection for `value`: plain when unambiguous, else JSON (valid YAML). */
function yamlValue(value: unknown): string {
  if (typeof value === "string" && PLAIN_STRING.test(value) && value.trim() === value) {
    const reread = parseYaml(`v: ${value}`) as { v: unknown };
    if (reread.v === value) return value;
  }
  return JSON.stringify(value);
}

/** The YAML frontmatter block (delimiters included) that parses back to `frontmatter`. */
export function renderFrontmatter(frontmatter: JsonObject): string {
  const lines = Object.entries(frontmatter).map(([key, value]) => {
    const name = /^[A-Za-z0-9_-]+$/.test(key) ? key : JSON.stringify(key);
    return `${name}: ${yamlValue(value)}`;
  });
  return `---\n${lines.join("\n")}\n---\n`;
}

/** The `sha256:<hex>` digest of `bytes`. */
export async function sha256Digest(bytes: Uint8Array): Promise<string> {
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return `sha256:${Array.from(hash, (byte) => byte.toString(16).padStart(2, "0")).join("")}`;
}

/** The skill's root directory URI (`…/SKILL.md` removed), or undefined for another URI. */
export function skillRootOf(uri: string): string | undefined {
  return uri.endsWith("/SKILL.md") ? uri.slice(0, -"/SKILL.md".length) : undefined;
}

/** The skill name a `SKILL.md` URI carries: its last path segment before `SKILL.md`. */
export function skillNameOf(uri: string): string | undefined {
  const root = skillRootOf(uri);
  if (root === undefined || !root.includes("://")) return undefined;
  return root.slice(root.lastIndexOf("/") + 1) || undefined;
}

/** Deep equality of two JSON values (object keys in any order). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((item, i) => sameJson(item, b[i]))
    );
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return (
    keys.length === Object.keys(b).length &&
    keys.every((key) => Object.hasOwn(b, key) && sameJson(a[key], b[key]))
  );
}
