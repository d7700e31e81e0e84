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
 * shows the authorization URL, then resolves with the request to the redirect path that
 * carries the authorization request's `state`.
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
  // Sign-ins waiting, by the `state` they sent: a request carrying any other is refused, so a
  // page or process that guesses the port cannot answer in the server's place (CSRF).
  const waiting = new Map<string | null, (url: URL) => void>();
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", redirectUri);
    if (req.method !== "GET" || url.pathname !== path) {
      res.writeHead(404).end();
      return;
    }
    const resolve = waiting.get(url.searchParams.get("state"));
    if (!resolve) {
      res.writeHead(400, { "content-type": "text/plain" }).end("No sign-in waits for this state");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(DONE_PAGE);
    resolve(url);
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
    const state = authorizationUrl.searchParams.get("state");
    let timer: ReturnType<typeof setTimeout> | undefined;
    const back = new Promise<URL>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new Error("No redirect came back to the loopback listener in time")),
        options.timeoutMs ?? 300_000,
      );
      waiting.set(state, resolve);
    });
    server.ref();
    try {
      await show(authorizationUrl);
      return await back;
    } finally {
      clearTimeout(timer);
      waiting.delete(state);
      if (waiting.size === 0) server.unref();
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
