import { invalidParams } from "../../../protocol/errors.js";
import type { JsonObject } from "../../../protocol/messages.js";
import { SKILLS_EXTENSION } from "../../../protocol/skills.js";
import type { ExtensionRequest, ServerExtension } from "../../extension.js";
import type { McpServer } from "../../mcp-server.js";
import { paginate } from "../../pagination.js";
import { directoryChildren } from "./directory.js";
import { skillsOf } from "./skill-registry.js";

export {
  type RegisteredSkill,
  registerSkill,
  type SkillFromParts,
  type SkillFromText,
  type SkillLayout,
  type SkillLimits,
  type SkillOptions,
  skillsOf,
} from "./skill-registry.js";

/** The era's cache fields (modern) on a skills result, with the server's resource hints. */
function cached({ server, env, era }: ExtensionRequest, result: JsonObject): JsonObject {
  return era.withCache(result, server.cache.resources, env);
}

/**
 * The `io.modelcontextprotocol/skills` extension (SEP-2640): `skills/list`, `skills/get` and
 * `resources/directory/read` over the skills registered with {@link registerSkill}. It is
 * declared (with `directoryRead: true`) once a skill is registered, in both eras and on stdio;
 * everything it answers derives from the registrations, so every process answers alike.
 */
export function skillsExtension(server: McpServer<never>): ServerExtension {
  return {
    id: SKILLS_EXTENSION,
    legacy: true,
    get declaration() {
      return skillsOf(server).size > 0 ? { directoryRead: true } : undefined;
    },
    methods: {
      "skills/list": async (request) => {
        const skills = [...skillsOf(server).values()];
        const page = paginate(skills, request.params.cursor, server.pageSize);
        const result: JsonObject = {
          skills: await Promise.all(page.items.map((skill) => skill.entry())),
        };
        if (page.nextCursor) result.nextCursor = page.nextCursor;
        return cached(request, result);
      },
      "skills/get": async (request) => {
        const { uri } = request.params;
        if (typeof uri !== "string") throw invalidParams("uri must be a string");
        const skill = skillsOf(server).get(uri);
        if (!skill) throw invalidParams(`Unknown skill: ${uri}`, { uri });
        return cached(request, { skill: await skill.entry() });
      },
      "resources/directory/read": async (request) => {
        const { uri } = request.params;
        if (typeof uri !== "string") throw invalidParams("uri must be a string");
        const children = directoryChildren(skillsOf(server).values(), uri);
        if (!children) throw invalidParams(`Not a directory resource: ${uri}`, { uri });
        const page = paginate(children, request.params.cursor, server.pageSize);
        const result: JsonObject = { resources: page.items };
        if (page.nextCursor) result.nextCursor = page.nextCursor;
        return cached(request, result);
      },
    },
  };
}
