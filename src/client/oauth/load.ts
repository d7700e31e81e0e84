import { OAuthError } from "./types.js";

/** The oauth4webapi module, an optional peer dependency loaded only when a client signs in. */
export type OAuth4WebApi = typeof import("oauth4webapi");

let loading: Promise<OAuth4WebApi> | undefined;

/** Loads oauth4webapi once; a clear error when it is not installed. */
export function loadOAuth4WebApi(): Promise<OAuth4WebApi> {
  loading ??= import("oauth4webapi").catch(() => {
    loading = undefined;
    throw new OAuthError(
      "Signing in to a protected server needs the optional peer dependency oauth4webapi (npm install oauth4webapi)",
    );
  });
  return loading;
}

/** True for hosts that never leave the machine: plain HTTP to them is allowed by default. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === "localhost" ||
    hostname === "[::1]" ||
    /^127(\.\d{1,3}){3}$/.test(hostname) ||
    hostname.endsWith(".localhost")
  );
}

/**
 * An OAuthError for anything oauth4webapi or the server threw, built from the parts that never
 * carry a credential: the library's own message, or the server's `error` and description.
 */
export function toOAuthError(error: unknown, doing: string): OAuthError {
  if (error instanceof OAuthError) return error;
  const fields = (error ?? {}) as {
    message?: unknown;
    error?: unknown;
    error_description?: unknown;
  };
  if (typeof fields.error === "string") {
    const description =
      typeof fields.error_description === "string" ? `: ${fields.error_description}` : "";
    return new OAuthError(`${doing} failed: ${fields.error}${description}`, fields.error);
  }
  const message = typeof fields.message === "string" ? fields.message : "unknown error";
  return new OAuthError(`${doing} failed: ${message}`);
}
