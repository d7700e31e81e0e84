import { describe, expect, it } from "vitest";
import { memoryOAuthStore, OAuthError } from "../../src/client/index.js";
import { OAuthSession, tokensKey } from "../../src/client/oauth/session.js";

/** A server that answers every request 401, recording what it was sent (no socket needed). */
function protectedServer() {
  const seen: { url: string; authorization: string | null }[] = [];
  const inner: typeof fetch = async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    seen.push({ url, authorization: new Headers(init?.headers).get("authorization") });
    return new Response(null, {
      status: 401,
      headers: {
        "www-authenticate":
          'Bearer resource_metadata="http://mcp.example.com/.well-known/oauth-protected-resource/mcp"',
      },
    });
  };
  return { seen, inner };
}

const signInOptions = {
  redirectUri: "http://127.0.0.1:53682/callback",
  redirect: async () => {
    throw new Error("the user must not be sent to sign in");
  },
};

// A bearer token on plain HTTP travels in the clear: the client signs in, and sends a token, only
// to HTTPS servers or loopback ones, unless told otherwise.
describe("signing in to an MCP server on plain HTTP", () => {
  it("should refuse before any discovery, and send no token, to a non-loopback host", async () => {
    const { seen, inner } = protectedServer();
    const session = new OAuthSession("http://mcp.example.com/mcp", signInOptions, inner);
    const failure = await session
      .fetch("http://mcp.example.com/mcp", { method: "POST", body: "{}" })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OAuthError);
    expect(String(failure)).toMatch(/plain HTTP/);
    expect(seen.map((request) => request.url)).toEqual(["http://mcp.example.com/mcp"]);
    expect(seen.every((request) => request.authorization === null)).toBe(true);
  });

  it("should never attach a kept token there either", async () => {
    const { seen, inner } = protectedServer();
    const store = memoryOAuthStore();
    const session = new OAuthSession(
      "http://mcp.example.com/mcp",
      { ...signInOptions, store },
      inner,
    );
    // A token kept from before (a CLI's store, say) for that very URL.
    await store.set(
      tokensKey("http://mcp.example.com/mcp"),
      JSON.stringify({
        accessToken: "kept-token",
        tokenType: "Bearer",
        issuer: "http://as.example.com",
        resource: "http://mcp.example.com/mcp",
      }),
    );
    seen.length = 0;
    await expect(session.fetch("http://mcp.example.com/mcp")).rejects.toThrow(/plain HTTP/);
    expect(seen.map((request) => request.authorization)).toEqual([]);
  });
});
