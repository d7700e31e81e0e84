import type { JsonObject } from "../../../protocol/messages.js";
import { DIRECTORY_MIME_TYPE } from "../../../protocol/skills.js";
import type { RegisteredSkill } from "./skill-registry.js";

/**
 * The direct children of directory `uri` within the registered skills (SEP-2640, Directory
 * Listing): files as resources, subdirectories as `inode/directory` resources, by name; or
 * undefined when `uri` is no directory of a skill (a file, or nothing at all). URIs are matched
 * as served, segments percent-encoded; names are the segments decoded.
 */
export function directoryChildren(
  skills: Iterable<RegisteredSkill>,
  uri: string,
): JsonObject[] | undefined {
  for (const skill of skills) {
    if (uri !== skill.root && !uri.startsWith(`${skill.root}/`)) continue;
    const prefix = uri === skill.root ? "" : `${uri.slice(skill.root.length + 1)}/`;
    const inside = skill.files.filter((file) => file.uri.startsWith(`${skill.root}/${prefix}`));
    if (inside.length === 0) continue;
    const children = new Map<string, JsonObject>();
    for (const file of inside) {
      const rest = file.uri.slice(skill.root.length + 1 + prefix.length);
      const slash = rest.indexOf("/");
      const name = decodeURIComponent(slash < 0 ? rest : rest.slice(0, slash));
      children.set(
        name,
        slash < 0
          ? { uri: file.uri, name, mimeType: file.mimeType, size: file.bytes.byteLength }
          : {
              uri: `${skill.root}/${prefix}${rest.slice(0, slash)}`,
              name,
              mimeType: DIRECTORY_MIME_TYPE,
            },
      );
    }
    return [...children.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, child]) => child);
  }
  return undefined;
}
