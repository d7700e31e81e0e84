import { describe, expect, it } from "vitest";
import { createMcpHandler, type RequestInfo } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, viaFetch } from "../helpers/modern.js";

describe("operator hooks", () => {
  it("should report each request to onRequest with method, name, era, client, status and duration", async () => {
    const seen: RequestInfo[] = [];
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      onRequest: (info) => seen.push(info),
    });
    const send = viaFetch(mcp.fetch);
    await call(send, "tools/call", { name: "echo", arguments: { text: "x" } });
    await call(send, "tools/call", { name: "nope", arguments: {} });
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({
      era: "modern",
      method: "tools/call",
      name: "echo",
      status: 200,
      client: { name: "mcp-mount-tests" },
    });
    expect(seen[0]?.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen[0]?.error).toBeUndefined();
    expect(seen[1]).toMatchObject({ name: "nope", error: { code: -32602 } });
    await mcp.close();
  });

  it("should give onError the full handler exception while the client sees a safe message", async () => {
    const errors: unknown[] = [];
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      onError: (error) => errors.push(error),
    });
    const { result } = await call(viaFetch(mcp.fetch), "tools/call", {
      name: "throws",
      arguments: {},
    });
    expect(result.isError).toBe(true);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).stack).toContain("fixture-server");
    await mcp.close();
  });

  it("should keep serving when a hook throws", async () => {
    const mcp = createMcpHandler(createFixtureServer(), {
      secret: "s",
      onRequest: () => {
        throw new Error("metrics down");
      },
    });
    const { result } = await call(viaFetch(mcp.fetch), "tools/call", {
      name: "echo",
      arguments: { text: "ok" },
    });
    expect(result.content).toEqual([{ type: "text", text: "ok" }]);
    await mcp.close();
  });
});
