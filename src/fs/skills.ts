import { readdir, readFile } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { splitSkillMd } from "../protocol/skills.js";
import { registerSkill } from "../server/ext/skills/skill-registry.js";
import type { McpServer, Registration } from "../server/mcp-server.js";

/** Options of {@link registerSkillDirectory}. */
export interface SkillDirectoryOptions {
  /** Path segments put before every skill's own path in its URI. @default none */
  prefix?: string;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A file's content: text when it is valid UTF-8, else its bytes. */
function contentOf(bytes: Uint8Array): string | Uint8Array {
  try {
    return utf8.decode(bytes);
  } catch {
    return bytes;
  }
}

/**
 * Every regular file under `dir`, by `/`-separated path relative to `root`. Links are skipped, and
 * so are hidden entries (`.env`, `.git/`): a skill's directory is often a checkout, and what it
 * hides is not meant to be served.
 */
async function filesUnder(root: string, dir = root): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      for (const [name, bytes] of await filesUnder(root, path)) files.set(name, bytes);
    } else if (entry.isFile()) {
      files.set(relative(root, path).split(sep).join("/"), await readFile(path));
    }
  }
  return files;
}

/** Registers the skill whose root is `dir`, whose name must be the directory's. */
async function registerOne(
  server: McpServer<never>,
  dir: string,
  prefix: string | undefined,
): Promise<Registration> {
  const files = await filesUnder(dir);
  const skillMd = files.get("SKILL.md");
  files.delete("SKILL.md");
  if (!skillMd) throw new TypeError(`No SKILL.md in ${dir}`);
  const others: Record<string, string | Uint8Array> = {};
  for (const [path, bytes] of files) others[path] = contentOf(bytes);
  const text = contentOf(skillMd);
  if (typeof text !== "string") throw new TypeError(`${dir}/SKILL.md is not UTF-8 text`);
  // Agent Skills: the name in the frontmatter is the directory's.
  if (splitSkillMd(text).frontmatter.name !== basename(dir)) {
    throw new TypeError(`The skill in ${dir} must be named after its directory`);
  }
  return registerSkill(server, { skillMd: text, files: others, ...(prefix ? { prefix } : {}) });
}

/** Registers every skill under `dir`; a directory without SKILL.md adds a prefix segment. */
async function registerTree(
  server: McpServer<never>,
  dir: string,
  prefix: string | undefined,
  registrations: Registration[],
): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.some((entry) => entry.isFile() && entry.name === "SKILL.md")) {
    registrations.push(await registerOne(server, dir, prefix));
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    const inner = (await readdir(path)).includes("SKILL.md");
    const next = inner ? prefix : prefix ? `${prefix}/${entry.name}` : entry.name;
    await registerTree(server, path, next, registrations);
  }
}

/**
 * Registers the skills found on disk under `dir` (Node only): each directory holding a
 * `SKILL.md` is a skill named after it, with every file below it; directories above a skill
 * become its URI's prefix (`dir/acme/billing/refunds/SKILL.md` is served as
 * `skill://acme/billing/refunds/SKILL.md`). The files are read once, now: the skills served are
 * what was on disk at registration. Resolves with one registration that removes them all.
 *
 * @example
 * ```ts
 * import { McpServer } from "mcp-mount";
 * import { registerSkillDirectory } from "mcp-mount/skills-fs";
 *
 * const server = new McpServer({ name: "docs", version: "1.0.0" });
 * await registerSkillDirectory(server, new URL("./skills", import.meta.url).pathname);
 * ```
 */
export async function registerSkillDirectory<App>(
  server: McpServer<App>,
  dir: string,
  options: SkillDirectoryOptions = {},
): Promise<Registration> {
  const registrations: Registration[] = [];
  try {
    await registerTree(server as unknown as McpServer<never>, dir, options.prefix, registrations);
  } catch (error) {
    for (const registration of registrations) registration.remove();
    throw error;
  }
  return {
    remove: () => {
      for (const registration of registrations) registration.remove();
    },
  };
}
