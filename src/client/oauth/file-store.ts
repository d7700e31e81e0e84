import { chmod, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { OAuthStore } from "./types.js";

/**
 * An {@link OAuthStore} in one JSON file readable by its owner only (0600, its folder 0700),
 * written whole through a temporary file so a crash never leaves half a file.
 *
 * @example
 * ```ts
 * import { fileOAuthStore } from "mcp-mount/client/node";
 * const store = fileOAuthStore(`${process.env.HOME}/.config/my-app/oauth.json`);
 * ```
 */
export function fileOAuthStore(path: string): OAuthStore {
  let writing: Promise<void> = Promise.resolve();

  const read = async (): Promise<Record<string, string>> => {
    try {
      return JSON.parse(await readFile(path, "utf8")) as Record<string, string>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
      throw error;
    }
  };

  const update = (change: (values: Record<string, string>) => void): Promise<void> => {
    const next = writing.then(async () => {
      const values = await read();
      change(values);
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(values, null, 2), { mode: 0o600 });
      await chmod(temporary, 0o600);
      await rename(temporary, path);
    });
    // One failed write is its caller's error, not every later one's.
    writing = next.catch(() => {});
    return next;
  };

  return {
    get: async (key) => {
      await writing;
      return (await read())[key];
    },
    set: (key, value) =>
      update((values) => {
        values[key] = value;
      }),
    delete: (key) =>
      update((values) => {
        delete values[key];
      }),
  };
}
