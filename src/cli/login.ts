import { spawn } from "node:child_process";
import { homedir } from "node:os";
import { join } from "node:path";
import { McpClient, type OAuthOptions } from "../client/index.js";
import { fileOAuthStore } from "../client/oauth/file-store.js";
import { loopbackRedirect } from "../client/oauth/loopback.js";
import { tokensKey } from "../client/oauth/session.js";
import { printMessage } from "./terminal.js";

const CLIENT_NAME = "mcp-mount CLI";

/** Where the CLI keeps tokens by default: `$XDG_CONFIG_HOME/mcp-mount/tokens.json` (0600). */
export function defaultTokenStore(): string {
  const config = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  return join(config, "mcp-mount", "tokens.json");
}

/**
 * The command opening a URL in the user's browser. Never through a shell: the URL comes from
 * an authorization server, and cmd.exe would run what follows an `&` in its query.
 */
export function browserCommand(url: URL, platform = process.platform): [string, string[]] {
  if (platform === "darwin") return ["open", [url.href]];
  if (platform === "win32") return ["rundll32", ["url.dll,FileProtocolHandler", url.href]];
  return ["xdg-open", [url.href]];
}

/** Opens a URL in the user's browser, best effort. */
function openBrowser(url: URL): void {
  const [command, args] = browserCommand(url);
  const child = spawn(command, args, { detached: true, stdio: "ignore" });
  child.on("error", () => printMessage("Could not open a browser: open the URL above by hand"));
  child.unref();
}

/** Sign-in for the CLI's commands: tokens in the store file, a loopback listener to close. */
export interface CliSignIn {
  auth: OAuthOptions;
  close(): Promise<void>;
}

/**
 * Sign-in as the CLI does it: tokens kept in `tokenStore` (0600) and refreshed; when the user
 * must sign in (no token yet, or a step up), the authorization URL is printed on stderr, opened
 * in a browser when asked, and the redirect awaited on a loopback listener.
 */
export async function cliSignIn(tokenStore: string, open: boolean): Promise<CliSignIn> {
  const loopback = await loopbackRedirect({
    onAuthorizationUrl: (authorizationUrl) => {
      printMessage(`Sign in at: ${authorizationUrl.href}`);
      if (open) openBrowser(authorizationUrl);
    },
  });
  return {
    auth: { ...loopback, store: fileOAuthStore(tokenStore), clientName: CLIENT_NAME },
    close: () => loopback.close(),
  };
}

/**
 * `mcp-mount login <url>`: forgets the tokens kept for the server, connects (signing in), and
 * keeps the new tokens. Tokens are never printed.
 */
export async function login(url: string, tokenStore: string, open: boolean): Promise<string> {
  const store = fileOAuthStore(tokenStore);
  await store.delete(tokensKey(url));
  const signIn = await cliSignIn(tokenStore, open);
  try {
    const client = await McpClient.connect(url, {
      auth: signIn.auth,
      clientInfo: { name: "mcp-mount-cli", version: "0.1.0" },
    });
    await client.close();
  } finally {
    await signIn.close();
  }
  return (await store.get(tokensKey(url)))
    ? `Signed in to ${url} (tokens kept in ${tokenStore})`
    : `${url} did not ask to sign in`;
}

/** `mcp-mount logout <url>`: forgets the tokens kept for the server. */
export async function logout(url: string, tokenStore: string): Promise<string> {
  const store = fileOAuthStore(tokenStore);
  const had = (await store.get(tokensKey(url))) !== undefined;
  await store.delete(tokensKey(url));
  return had ? `Signed out of ${url}` : `Not signed in to ${url}`;
}
