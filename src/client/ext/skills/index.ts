import { invalidParams } from "../../../protocol/errors.js";
import { isObject, type JsonObject } from "../../../protocol/messages.js";
import { SKILLS_EXTENSION, type SkillEntry } from "../../../protocol/skills.js";
import type { ClientExtension } from "../../extension.js";
import type { Era, RequestOptions } from "../../types.js";
import { Skill, type SkillSource } from "./skill.js";

export { type LoadedSkill, Skill, SkillVerificationError } from "./skill.js";

/** The client a skills listing runs through. */
export interface SkillsClient {
  readResource(uri: string, options?: RequestOptions): Promise<JsonObject>;
  request(method: string, params: JsonObject, options?: RequestOptions): Promise<JsonObject>;
  readonly server: { capabilities: JsonObject };
}

/** The server's skills settings, or undefined when it does not declare the extension. */
function settingsOf(client: SkillsClient): JsonObject | undefined {
  const extensions = client.server.capabilities.extensions;
  const settings = isObject(extensions) ? extensions[SKILLS_EXTENSION] : undefined;
  return isObject(settings) ? settings : undefined;
}

function sourceOf(client: SkillsClient, settings: JsonObject): SkillSource {
  return {
    readResource: (uri, options) => client.readResource(uri, options),
    request: (method, params, options) => client.request(method, params, options),
    directoryRead: settings.directoryRead === true,
  };
}

/** True for what SEP-2640 calls a skill entry: a URI, a frontmatter, resources. */
function isEntry(value: unknown): value is SkillEntry {
  return (
    isObject(value) &&
    typeof value.uri === "string" &&
    isObject(value.frontmatter) &&
    typeof value.frontmatter.name === "string" &&
    typeof value.frontmatter.description === "string" &&
    (value.resources === "dynamic" || Array.isArray(value.resources))
  );
}

/** Every page of `skills/list` as {@link Skill}s; none when the server does not declare it. */
export async function listSkills(client: SkillsClient, options: RequestOptions): Promise<Skill[]> {
  const settings = settingsOf(client);
  if (!settings) return [];
  const source = sourceOf(client, settings);
  const skills: Skill[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await client.request("skills/list", cursor ? { cursor } : {}, options);
    for (const entry of Array.isArray(page.skills) ? page.skills : []) {
      if (isEntry(entry)) skills.push(new Skill(entry, source));
    }
    cursor = typeof page.nextCursor === "string" && page.nextCursor ? page.nextCursor : undefined;
    // A cursor seen before would loop forever.
    if (cursor && seen.has(cursor)) break;
    if (cursor) seen.add(cursor);
  } while (cursor);
  return skills;
}

/** The skill whose `SKILL.md` is `uri`, by `skills/get`. */
export async function getSkill(
  client: SkillsClient,
  uri: string,
  options: RequestOptions,
): Promise<Skill> {
  const settings = settingsOf(client);
  if (!settings) throw new Error(`The server does not declare ${SKILLS_EXTENSION}`);
  const result = await client.request("skills/get", { uri }, options);
  if (!isEntry(result.skill)) throw invalidParams(`skills/get returned no skill entry for ${uri}`);
  return new Skill(result.skill, sourceOf(client, settings));
}

/** Every skill (`skills/list`), or with `uri` the one `skills/get` names. */
export async function skillsOf(
  client: SkillsClient,
  options: RequestOptions & { uri?: string },
): Promise<Skill[]> {
  const { uri, ...rest } = options;
  return uri === undefined ? listSkills(client, rest) : [await getSkill(client, uri, rest)];
}

const SKILLS_METHODS = new Set(["skills/list", "skills/get", "resources/directory/read"]);

/** The skills extension's client side: declared (`{}`) on its methods in the modern era. */
export class SkillsExtension implements ClientExtension {
  readonly id = SKILLS_EXTENSION;

  declaredOn(method: string, era: Era): JsonObject | undefined {
    return era === "modern" && SKILLS_METHODS.has(method) ? {} : undefined;
  }

  follow(): undefined {
    return undefined;
  }
}
