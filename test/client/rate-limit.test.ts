// The client meets a rate limit: it reports it, rather than taking it for a legacy server.
import { afterEach, describe, expect, it } from "vitest";
import { McpClient, McpError } from "../../src/client/index.js";
import { createMcpHandler, McpServer } from "../../src/index.js";

const handlers: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(handlers.splice(0).map((mcp) => mcp.close()));
});

describe("the client against a rate-limited server", () => {
  it("should report the rate limit of its first request rather than fall back to legacy", async () => {
    const server = new McpServer({ name: "limited", version: "1.0.0" });
    server.tool({ name: "cheap" }, () => "cheap");
    const mcp = createMcpHandler(server, { rateLimit: { points: 2 } });
    handlers.push(mcp);
    const urls: string[] = [];
    const fetch = (input: string | URL | Request, init?: RequestInit) => {
      const request = new Request(input, init);
      urls.push(`${request.method} ${request.headers.get("mcp-method") ?? "initialize?"}`);
      return mcp.fetch(request, { remoteAddress: "10.0.0.1" });
    };
    const client = await McpClient.connect("http://127.0.0.1/mcp", { fetch, eraCache: false });
    expect(client.era).toBe("modern");
    await client.callTool("cheap", {}); // the second point
    const refused = await client.callTool("cheap", {}).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32005);
    await client.close();

    // A new client whose probe is refused is told why, and tries no other era.
    urls.length = 0;
    const failed = await McpClient.connect("http://127.0.0.1/mcp", { fetch, eraCache: false })
      .then(() => undefined)
      .catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).code).toBe(-32005);
    expect(urls).toEqual(["POST server/discover"]);
  });
});
