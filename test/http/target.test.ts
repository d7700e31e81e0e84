import { describe, expect, it } from "vitest";
import { createDiscovery } from "../../src/http/discovery/serve.js";
import { isMetadataUrl } from "../../src/http/guards/auth-gate.js";
import { pathnameOf, targetOf } from "../../src/http/target.js";
import type { McpHttpRequest } from "../../src/http/types.js";

/** Request targets as a client may send them, the tricky ones first. */
const TARGETS = [
  "//evil/.well-known/oauth-protected-resource",
  "/\\evil/.well-known/oauth-protected-resource",
  "//x/mcp/server-card",
  "//.well-known/ai-catalog.json",
  "/.well-known/oauth-protected-resource",
  "/.well-known/oauth-protected-resource/api/mcp",
  "/.well-known/oauth-protected-resource-not",
  "/mcp/server-card?x=1",
  "/api/mcp/server-card",
  "/.well-known/ai-catalog.json",
  "/.well-known/mcp/server-card.json",
  "/mcp",
  "/mcp?x=%2F%2Fevil",
];

describe("a request's target read in place of its URL", () => {
  const discovery = createDiscovery(
    { name: "weather", version: "1.0.0" },
    { serverCard: {}, auth: undefined, legacy: true, forwarded: false },
  )!;

  it("should name the same path, document and metadata request as the URL built from it", () => {
    for (const target of TARGETS) {
      const url = `http://127.0.0.1:3000${target}`;
      expect(pathnameOf(target), target).toBe(new URL(url).pathname);
      expect(isMetadataUrl(target), target).toBe(isMetadataUrl(url));
      expect(discovery.match(target), target).toEqual(discovery.match(url));
    }
    // What the cases mean, so the agreement above is not agreement on nothing.
    expect(isMetadataUrl("//evil/.well-known/oauth-protected-resource")).toBe(false);
    expect(isMetadataUrl("/.well-known/oauth-protected-resource/api/mcp")).toBe(true);
    expect(discovery.match("/mcp")).toBeUndefined();
    expect(discovery.match("/api/mcp/server-card")).toMatchObject({ endpointPath: "/api/mcp" });
  });

  it("should read the URL where the host gives no target, or one not in origin form", () => {
    const request = (target: string | undefined) =>
      ({ url: "http://127.0.0.1:3000/mcp", target }) as McpHttpRequest;
    expect(targetOf(request("/mcp?x=1"))).toBe("/mcp?x=1");
    expect(targetOf(request(undefined))).toBe("http://127.0.0.1:3000/mcp");
    // Absolute form (a request sent as to a proxy) and the asterisk: the URL, as before.
    expect(targetOf(request("http://evil/.well-known/oauth-protected-resource"))).toBe(
      "http://127.0.0.1:3000/mcp",
    );
    expect(targetOf(request("*"))).toBe("http://127.0.0.1:3000/mcp");
  });
});
