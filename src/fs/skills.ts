import { open, readdir } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import { splitSkillMd } from "../protocol/skills.js";
import { overLimit, type SkillLimits, skillLimits } from "../server/ext/skills/skill-files.js";
import { registerSkill } from "../server/ext/skills/skill-registry.js";
import type { McpServer, Registration } from "../server/mcp-server.js";

/** Options of {@link registerSkillDirectory}. */
export interface SkillDirectoryOptions {
  /** Path segments put before every skill's own path in its URI. @default none */
  prefix?: string;
  /**
   * Bounds on each skill's files, checked as the directory is read (a file too large is never
   * read). @default 500 files, 8 MiB each, 32 MiB in all
   */
  limits?: SkillLimits;
}

/** What is left of one skill's limits while its directory is read. */
interface Budget {
  skill: string;
  limits: Required<SkillLimits>;
  files: number;
  bytes: number;
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
async function filesUnder(
  root: string,
  budget: Budget,
  dir = root,
): Promise<Map<string, Uint8Array>> {
  const files = new Map<string, Uint8Array>();
  const entries = await readdir(dir, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      for (const [name, bytes] of await filesUnder(root, budget, path)) files.set(name, bytes);
    } else if (entry.isFile()) {
      const name = relative(root, path).split(sep).join("/");
      files.set(name, await readWithin(path, name, budget));
    }
  }
  return files;
}

/** Reads one file of a skill, refusing it, before reading, when it would break a limit. */
async function readWithin(path: string, name: string, budget: Budget): Promise<Uint8Array> {
  const { skill, limits } = budget;
  if (++budget.files > limits.maxFiles) {
    throw overLimit(skill, `more than ${limits.maxFiles} files`, "maxFiles", limits.maxFiles);
  }
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    if (size > limits.maxFileBytes) {
      throw overLimit(skill, `${name} has ${size} bytes`, "maxFileBytes", limits.maxFileBytes);
    }
    budget.bytes += size;
    if (budget.bytes > limits.maxTotalBytes) {
      throw overLimit(
        skill,
        `over ${limits.maxTotalBytes} bytes`,
        "maxTotalBytes",
        limits.maxTotalBytes,
      );
    }
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** Registers the skill whose root is `dir`, whose name must be the directory's. */
async function registerOne(
  server: McpServer<never>,
  dir: string,
  { prefix, limits }: SkillDirectoryOptions,
): Promise<Registration> {
  const budget: Budget = { skill: dir, limits: skillLimits(limits), files: 0, bytes: 0 };
  const files = await filesUnder(dir, budget);
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
  // registerSkill checks the limits again, on what was read (a file may grow while read).
  return registerSkill(server, {
    skillMd: text,
    files: others,
    ...(prefix ? { prefix } : {}),
    ...(limits ? { limits } : {}),
  });
}

/** Registers every skill under `dir`; a directory without SKILL.md adds a prefix segment. */
async function registerTree(
  server: McpServer<never>,
  dir: string,
  options: SkillDirectoryOptions,
  registrations: Registration[],
): Promise<void> {
  const { prefix } = options;
  const entries = await readdir(dir, { withFileTypes: true });
  if (entries.some((entry) => entry.isFile() && entry.name === "SKILL.md")) {
    registrations.push(await registerOne(server, dir, options));
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (!entry.isDirectory() || entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    const inner = (await readdir(path)).includes("SKILL.md");
    const next = inner ? prefix : prefix ? `${prefix}/${entry.name}` : entry.name;
    await registerTree(server, path, { ...options, prefix: next }, registrations);
  }
}

/**
 * Registers the skills found on disk under `dir` (Node only): each directory holding a
 * `SKILL.md` is a skill named after it, with every file below it; directories above a skill
 * become its URI's prefix (`dir/acme/billing/refunds/SKILL.md` is served as
 * `skill://acme/billing/refunds/SKILL.md`). The files are read once, now: the skills served are
 * what was on disk at registration. Names are served percent-encoded (`my notes.md` as
 * `my%20notes.md`). Resolves with one registration that removes them all; rejects, registering
 * none, on a skill over its `limits`.
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
    await registerTree(server as unknown as McpServer<never>, dir, options, registrations);
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
