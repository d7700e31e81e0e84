import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder. */
export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The guides' folder. */
export const DOCS = join(ROOT, "docs");

/** README.md and every guide in docs/, by path, the README first. */
export function documents(): string[] {
  const guides = readdirSync(DOCS)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => join(DOCS, name));
  return [join(ROOT, "README.md"), ...guides];
}
