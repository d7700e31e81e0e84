import type { JsonObject } from "../../../protocol/messages.js";
import {
  renderFrontmatter,
  SKILL_NAME,
  type SkillEntry,
  type SkillFileEntry,
  sha256Digest,
  splitSkillMd,
} from "../../../protocol/skills.js";
import type { McpServer, Registration } from "../../mcp-server.js";
import {
  checkLimits,
  type SkillFile,
  type SkillLimits,
  skillLimits,
  toFile,
  toUriPath,
} from "./skill-files.js";

export type { SkillFile, SkillLimits } from "./skill-files.js";

/** A skill given by its `SKILL.md` text, frontmatter and all. */
export interface SkillFromText {
  /** The whole `SKILL.md`: YAML frontmatter (with `name` and `description`), then the body. */
  skillMd: string;
}

/** A skill given by its parts, from which its `SKILL.md` is written. */
export interface SkillFromParts {
  /** The skill's name: 1-64 lowercase letters, digits and single hyphens; the URI ends with it. */
  name: string;
  /** What the skill does and when to use it. */
  description: string;
  /** The body of `SKILL.md`: the instructions, in Markdown. */
  instructions: string;
  /** More frontmatter fields (`license`, `metadata`, `allowed-tools`...). */
  frontmatter?: JsonObject;
}

/** Where a skill lives and what files it has besides `SKILL.md`. */
export interface SkillLayout {
  /** Path segments before the name: `"acme/billing"` serves `skill://acme/billing/<name>/SKILL.md`. */
  prefix?: string;
  /**
   * The skill's other files, by path relative to its root (`references/FORMS.md`). Each path
   * segment is percent-encoded in the file's URI: `my notes.md` is served as `my%20notes.md`.
   */
  files?: Record<string, string | Uint8Array>;
  /** Bounds on the skill's files. @default 500 files, 8 MiB each, 32 MiB in all */
  limits?: SkillLimits;
}

/** Options of {@link registerSkill}. */
export type SkillOptions = (SkillFromText | SkillFromParts) & SkillLayout;

/** A registered skill: its entry's parts, and its files in path order. */
export interface RegisteredSkill {
  uri: string;
  /** `skill://<prefix>/<name>`, the skill's root directory. */
  root: string;
  frontmatter: SkillEntry["frontmatter"];
  files: SkillFile[];
  /** Its `skills/list` entry, digests computed once. */
  entry(): Promise<SkillEntry>;
}

const registries = new WeakMap<McpServer<never>, Map<string, RegisteredSkill>>();

/** The skills registered on `server`, by `SKILL.md` URI (in registration order). */
export function skillsOf(server: McpServer<never>): ReadonlyMap<string, RegisteredSkill> {
  return registries.get(server) ?? new Map();
}

function skillMdOf(options: SkillOptions): string {
  if ("skillMd" in options) return options.skillMd;
  const frontmatter = {
    name: options.name,
    description: options.description,
    ...options.frontmatter,
  };
  return `${renderFrontmatter(frontmatter)}\n${options.instructions}`;
}

/** The skill's frontmatter, checked against the Agent Skills rules SEP-2640 relies on. */
function frontmatterOf(skillMd: string): SkillEntry["frontmatter"] {
  const { frontmatter } = splitSkillMd(skillMd);
  const { name, description } = frontmatter;
  if (typeof name !== "string" || !SKILL_NAME.test(name)) {
    throw new TypeError(`Invalid skill name: ${String(name)}`);
  }
  if (typeof description !== "string" || description === "") {
    throw new TypeError(`Skill ${name} needs a non-empty description`);
  }
  return frontmatter as SkillEntry["frontmatter"];
}

/** Registers each file of `skill` as a resource; the registrations to remove. */
function registerFiles(server: McpServer<never>, skill: RegisteredSkill): Registration[] {
  return skill.files.map((file) => {
    const isSkillMd = file.uri === skill.uri;
    return server.resource(
      {
        uri: file.uri,
        name: isSkillMd ? skill.frontmatter.name : file.path,
        ...(isSkillMd ? { description: skill.frontmatter.description } : {}),
        mimeType: file.mimeType,
        size: file.bytes.byteLength,
      },
      () => file.content,
    );
  });
}

/**
 * Registers a skill (the skills extension, SEP-2640): its `SKILL.md` and every file become
 * resources under `skill://[prefix/]<name>/`, listed by `skills/list` and `skills/get` with their
 * digests. Registration is all there is to it, so every process that registers the same skills
 * serves the same entries. Throws on an invalid name, frontmatter or path, and (a RangeError)
 * on files more or larger than `limits` allow.
 *
 * @example
 * ```ts
 * import { McpServer, registerSkill } from "mcp-mount";
 *
 * const server = new McpServer({ name: "docs", version: "1.0.0" });
 * registerSkill(server, {
 *   name: "release-notes",
 *   description: "Write release notes in this team's format",
 *   instructions: "# Release notes\n\nFollow templates/notes.md.",
 *   files: { "templates/notes.md": "## Added\n\n## Fixed\n" },
 * });
 * ```
 */
export function registerSkill<App>(server: McpServer<App>, options: SkillOptions): Registration {
  const owner = server as unknown as McpServer<never>;
  const skillMd = skillMdOf(options);
  const frontmatter = frontmatterOf(skillMd);
  const limits = skillLimits(options.limits);
  const prefix =
    options.prefix === undefined ? "" : `${toUriPath(options.prefix, "skill prefix")}/`;
  const root = `skill://${prefix}${frontmatter.name}`;
  const uri = `${root}/SKILL.md`;
  const registry = registries.get(owner) ?? new Map<string, RegisteredSkill>();
  if (registry.has(uri)) throw new TypeError(`Duplicate skill: ${uri}`);
  const files = [toFile(root, "SKILL.md", skillMd)];
  for (const [path, content] of Object.entries(options.files ?? {})) {
    if (path === "SKILL.md") throw new TypeError(`Skill ${uri}: SKILL.md is given as skillMd`);
    files.push(toFile(root, path, content));
  }
  checkLimits(uri, files, limits);
  files.sort((a, b) => (a.path === "SKILL.md" ? -1 : b.path === "SKILL.md" ? 1 : 0));
  let entry: Promise<SkillEntry> | undefined;
  const skill: RegisteredSkill = {
    uri,
    root,
    frontmatter,
    files,
    entry: () => {
      entry ??= Promise.all(
        files.map(
          async (file): Promise<SkillFileEntry> => ({
            uri: file.uri,
            digest: await sha256Digest(file.bytes),
            size: file.bytes.byteLength,
          }),
        ),
      ).then((resources) => ({ uri, frontmatter, resources }));
      return entry;
    },
  };
  registry.set(uri, skill);
  registries.set(owner, registry);
  const resources = registerFiles(owner, skill);
  return {
    remove: () => {
      if (registry.get(uri) !== skill) return;
      registry.delete(uri);
      for (const resource of resources) resource.remove();
    },
  };
}
