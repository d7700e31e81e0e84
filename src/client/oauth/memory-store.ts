import type { OAuthStore } from "./types.js";

/** An {@link OAuthStore} in memory: what a client keeps when no store is given. */
export function memoryOAuthStore(): OAuthStore {
  const values = new Map<string, string>();
  return {
    get: (key) => values.get(key),
    set: (key, value) => {
      values.set(key, value);
    },
    delete: (key) => {
      values.delete(key);
    },
  };
}
