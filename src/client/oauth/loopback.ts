import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RedirectHandler } from "./types.js";

/** Options of {@link loopbackRedirect}. */
export interface LoopbackRedirectOptions {
  /** Port on 127.0.0.1. @default 0 (any free port) */
  port?: number;
  /** Path of the redirect URI. @default "/callback" */
  path?: string;
  /**
   * Shows the user where to sign in (print it, open a browser).
   * @default prints the URL on stderr
   */
  onAuthorizationUrl?: (url: URL) => void | Promise<void>;
  /** Milliseconds to wait for the user to come back. @default 300000 */
  timeoutMs?: number;
}

/** A loopback redirect listener: spread it into `auth` options, close it when done. */
export interface LoopbackRedirect {
  redirectUri: string;
  redirect: RedirectHandler;
  close(): Promise<void>;
}

const DONE_PAGE =
  "<!doctype html><title>Signed in</title><p>Signed in. You can close this window.</p>";

/**
 * Listens on 127.0.0.1 for the authorization server's redirect (RFC 8252 §7.3): each sign-in
 * shows the authorization URL, then resolves with the first request to the redirect path.
 * The listener does not keep the process alive while nobody is signing in.
 *
 * @example
 * ```ts
 * import { McpClient } from "mcp-mount/client";
 * import { fileOAuthStore, loopbackRedirect } from "mcp-mount/client/node";
 * const loopback = await loopbackRedirect();
 * const client = await McpClient.connect("https://example.com/mcp", {
 *   auth: { ...loopback, store: fileOAuthStore("./tokens.json") },
 * });
 * await loopback.close();
 * ```
 */
export async function loopbackRedirect(
  options: LoopbackRedirectOptions = {},
): Promise<LoopbackRedirect> {
  const path = options.path ?? "/callback";
  let waiting: ((url: URL) => void) | undefined;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", redirectUri);
    if (req.method !== "GET" || url.pathname !== path || !waiting) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(DONE_PAGE);
    waiting(url);
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  server.unref();
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  const show =
    options.onAuthorizationUrl ??
    ((url: URL) => {
      console.error(`Sign in at: ${url.href}`);
    });

  const redirect: RedirectHandler = async (authorizationUrl) => {
    const back = new Promise<URL>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error("No redirect came back to the loopback listener in time")),
        options.timeoutMs ?? 300_000,
      );
      waiting = (url) => {
        clearTimeout(timer);
        resolve(url);
      };
    });
    server.ref();
    try {
      await show(authorizationUrl);
      return await back;
    } finally {
      waiting = undefined;
      server.unref();
    }
  };

  return {
    redirectUri,
    redirect,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
