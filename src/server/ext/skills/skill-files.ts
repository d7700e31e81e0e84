import { mimeTypeOf } from "./mime-types.js";

/** Bounds on what one skill may hold, checked at registration (every skill is held in memory). */
export interface SkillLimits {
  /** Files per skill, `SKILL.md` included. @default 500 */
  maxFiles?: number;
  /** Bytes per file. @default 8_388_608 (8 MiB) */
  maxFileBytes?: number;
  /** Bytes of all of a skill's files together. @default 33_554_432 (32 MiB) */
  maxTotalBytes?: number;
}

/** {@link SkillLimits} with every default filled in. */
export const DEFAULT_SKILL_LIMITS: Required<SkillLimits> = {
  maxFiles: 500,
  maxFileBytes: 8 * 1024 * 1024,
  maxTotalBytes: 32 * 1024 * 1024,
};

/** The limits in force: `limits` over the defaults; throws on one that is no positive integer. */
export function skillLimits(limits: SkillLimits = {}): Required<SkillLimits> {
  const merged = {
    maxFiles: limits.maxFiles ?? DEFAULT_SKILL_LIMITS.maxFiles,
    maxFileBytes: limits.maxFileBytes ?? DEFAULT_SKILL_LIMITS.maxFileBytes,
    maxTotalBytes: limits.maxTotalBytes ?? DEFAULT_SKILL_LIMITS.maxTotalBytes,
  };
  for (const [name, value] of Object.entries(merged)) {
    if (!Number.isSafeInteger(value) || value < 1) {
      throw new TypeError(`Invalid skill limit ${name}: ${value}`);
    }
  }
  return merged;
}

/** The error of a skill over one of its limits. */
export function overLimit(skill: string, what: string, limit: keyof SkillLimits, max: number) {
  return new RangeError(`Skill ${skill}: ${what}, over ${limit} (${max})`);
}

/**
 * `path` as URI path segments: each percent-encoded (RFC 3986 §3.3), so a name with a space,
 * `#`, `?` or `%` stays one segment with no fragment, query or escape meaning (a file named
 * `%2e%2e` is `%252e%252e`, no dot-segment). Empty, `.` and `..` segments are refused, as are
 * names that are no Unicode text (lone surrogates).
 */
export function toUriPath(path: string, what: string): string {
  const segments = path.split("/");
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) {
    throw new TypeError(`Invalid ${what}: ${path}`);
  }
  try {
    return segments.map(encodeURIComponent).join("/");
  } catch {
    throw new TypeError(`Invalid ${what} (not Unicode text): ${JSON.stringify(path)}`);
  }
}

/** One file of a registered skill. */
export interface SkillFile {
  /** Its path relative to the skill's root, as given. */
  path: string;
  /** `<root>/<path>`, each segment of `path` percent-encoded. */
  uri: string;
  mimeType: string;
  content: string | Uint8Array;
  bytes: Uint8Array;
}

/** The file at `path` of the skill whose root URI is `root`. */
export function toFile(root: string, path: string, content: string | Uint8Array): SkillFile {
  const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
  const uri = `${root}/${toUriPath(path, "skill file path")}`;
  return { path, uri, mimeType: mimeTypeOf(path, content), content, bytes };
}

/** Throws when the files of skill `uri` are more or larger than `limits` allow. */
export function checkLimits(uri: string, files: SkillFile[], limits: Required<SkillLimits>): void {
  if (files.length > limits.maxFiles) {
    throw overLimit(uri, `${files.length} files`, "maxFiles", limits.maxFiles);
  }
  let total = 0;
  for (const file of files) {
    const size = file.bytes.byteLength;
    if (size > limits.maxFileBytes) {
      throw overLimit(uri, `${file.path} has ${size} bytes`, "maxFileBytes", limits.maxFileBytes);
    }
    total += size;
  }
  if (total > limits.maxTotalBytes) {
    throw overLimit(uri, `${total} bytes in all`, "maxTotalBytes", limits.maxTotalBytes);
  }
}
