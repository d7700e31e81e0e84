import { isObject, type JsonObject } from "../../../protocol/messages.js";
import {
  type SkillEntry,
  type SkillFileEntry,
  sameJson,
  sha256Digest,
  skillRootOf,
  splitSkillMd,
} from "../../../protocol/skills.js";
import { fromBase64, fromUtf8, utf8 } from "../../../utils/base64.js";
import type { RequestOptions } from "../../types.js";

/** What a {@link Skill} asks of the client it came from. */
export interface SkillSource {
  readResource(uri: string, options?: RequestOptions): Promise<JsonObject>;
  request(method: string, params: JsonObject, options?: RequestOptions): Promise<JsonObject>;
  /** Whether the server declared `directoryRead: true`. */
  readonly directoryRead: boolean;
}

/**
 * A file of a skill that failed verification against the skill's entry (SEP-2640, Integrity
 * and verification): a digest or size mismatch, an unlisted file, or a `SKILL.md` whose
 * frontmatter differs from the entry's. Its content must not be used.
 */
export class SkillVerificationError extends Error {
  override name = "SkillVerificationError";
  constructor(
    message: string,
    /** The URI of the file that failed. */
    readonly uri: string,
  ) {
    super(message);
  }
}

/** A loaded skill: its `SKILL.md` checked against its entry. */
export interface LoadedSkill {
  /** The whole `SKILL.md`. */
  text: string;
  /** The instructions after the frontmatter. */
  body: string;
  frontmatter: JsonObject;
}

/**
 * A skill a server publishes (SEP-2640), from `skills/list` or `skills/get`: its entry, with
 * nothing fetched. {@link load} and {@link read} fetch one file each when asked, verify it
 * against the entry, and refuse every read of this skill after a failed verification (call
 * `client.skill(uri)` for the current entry).
 */
export class Skill {
  /** The URI of its `SKILL.md`. */
  readonly uri: string;
  /** Its root directory: the URI without `/SKILL.md`. */
  readonly root: string;
  readonly name: string;
  readonly description: string;
  /** The `SKILL.md` frontmatter as the server listed it. */
  readonly frontmatter: SkillEntry["frontmatter"];
  /** Every file with its digest and size, or `"dynamic"` (nothing to verify against). */
  readonly resources: SkillFileEntry[] | "dynamic";
  readonly #source: SkillSource;
  #failure: SkillVerificationError | undefined;

  constructor(entry: SkillEntry, source: SkillSource) {
    this.uri = entry.uri;
    this.root = skillRootOf(entry.uri) ?? entry.uri;
    this.frontmatter = entry.frontmatter;
    this.name = entry.frontmatter.name;
    this.description = entry.frontmatter.description;
    this.resources = entry.resources;
    this.#source = source;
  }

  /** Fetches `SKILL.md` and checks its digest, size and frontmatter against the entry. */
  async load(options: RequestOptions = {}): Promise<LoadedSkill> {
    const text = fromUtf8(await this.#fetch(this.uri, options));
    let frontmatter: JsonObject;
    let body: string;
    try {
      ({ frontmatter, body } = splitSkillMd(text));
    } catch (error) {
      throw this.#fail(`${this.uri}: unreadable frontmatter (${(error as Error).message})`);
    }
    if (!sameJson(frontmatter, this.frontmatter)) {
      throw this.#fail(`${this.uri}: its frontmatter differs from the skill's entry`);
    }
    return { text, body, frontmatter };
  }

  /** One file of the skill, by path from its root (`references/FORMS.md`) or URI, verified. */
  async read(path: string, options: RequestOptions = {}): Promise<Uint8Array> {
    const uri = path.includes("://") ? path : `${this.root}/${path.replace(/^\.?\//, "")}`;
    return this.#fetch(uri, options);
  }

  /** The text of one file of the skill, verified. */
  async readText(path: string, options: RequestOptions = {}): Promise<string> {
    return fromUtf8(await this.read(path, options));
  }

  /** The direct children of a directory of the skill (`resources/directory/read`). */
  async list(path = "", options: RequestOptions = {}): Promise<JsonObject[]> {
    if (!this.#source.directoryRead) {
      throw new Error("The server does not serve resources/directory/read");
    }
    const uri = path === "" ? this.root : `${this.root}/${path.replace(/\/$/, "")}`;
    const children: JsonObject[] = [];
    let cursor: unknown;
    do {
      const params: JsonObject = cursor === undefined ? { uri } : { uri, cursor };
      const page = await this.#source.request("resources/directory/read", params, options);
      if (Array.isArray(page.resources)) children.push(...(page.resources as JsonObject[]));
      cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    return children;
  }

  /** Reads `uri` and verifies it against its entry: listed, same size, same digest. */
  async #fetch(uri: string, options: RequestOptions): Promise<Uint8Array> {
    if (this.#failure) throw this.#failure;
    const listed = this.resources === "dynamic" ? undefined : this.resources;
    const entry = listed?.find((file) => file.uri === uri);
    // A file the entry does not list is a change to the skill: refused before it is read.
    if (listed && !entry) throw this.#fail(`${uri} is not a file of skill ${this.uri}`);
    const bytes = bytesOf(await this.#source.readResource(uri, options), uri);
    // A server that gives no size (the SEP's text has none; the digest still binds the file).
    const size: unknown = entry?.size;
    if (entry && typeof size === "number" && bytes.byteLength !== size) {
      throw this.#fail(`${uri}: ${bytes.byteLength} bytes where the entry says ${entry.size}`);
    }
    if (entry && (await sha256Digest(bytes)) !== entry.digest) {
      throw this.#fail(`${uri}: its digest differs from the skill's entry`);
    }
    return bytes;
  }

  #fail(message: string): SkillVerificationError {
    this.#failure = new SkillVerificationError(message, this.uri);
    return this.#failure;
  }
}

/** The raw bytes of the content of a `resources/read` result for `uri`. */
function bytesOf(result: JsonObject, uri: string): Uint8Array {
  const contents = Array.isArray(result.contents) ? result.contents : [];
  const content = contents.find((item) => isObject(item) && item.uri === uri) ?? contents[0];
  if (isObject(content) && typeof content.text === "string") return utf8(content.text);
  if (isObject(content) && typeof content.blob === "string") return fromBase64(content.blob);
  throw new SkillVerificationError(`${uri}: the server returned no content`, uri);
}
