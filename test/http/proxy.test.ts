import { describe, expect, it } from "vitest";
import { asForwarded, clientAddressOf, proxyHops } from "../../src/http/guards/proxy.js";
import type { McpHttpRequest } from "../../src/http/types.js";

function requestFrom(remoteAddress: string, forwardedFor?: string): McpHttpRequest {
  return {
    method: "POST",
    url: "http://127.0.0.1/mcp",
    header: (name) => (name === "x-forwarded-for" ? (forwardedFor ?? null) : null),
    body: async () => ({ kind: "text", text: "" }),
    signal: new AbortController().signal,
    remoteAddress,
  };
}

describe("the client address behind proxies", () => {
  it("should be the socket's peer when no proxy is trusted, whatever X-Forwarded-For says", () => {
    expect(clientAddressOf(requestFrom("203.0.113.9", "1.2.3.4"), 0)).toBe("203.0.113.9");
  });

  it("should be the entry the trusted proxy appended, never one the client made up", () => {
    // The client sent "X-Forwarded-For: 1.2.3.4"; the proxy appended the address it saw.
    const req = requestFrom("10.0.0.2", "1.2.3.4, 198.51.100.7");
    expect(clientAddressOf(req, 1)).toBe("198.51.100.7");
    expect(clientAddressOf(req, 2)).toBe("1.2.3.4");
  });

  it("should fall back to the socket's peer when a trusted proxy sent no X-Forwarded-For", () => {
    expect(clientAddressOf(requestFrom("10.0.0.2"), 1)).toBe("10.0.0.2");
    // Fewer entries than trusted proxies: none of them can be believed.
    expect(clientAddressOf(requestFrom("10.0.0.2", "1.2.3.4"), 2)).toBe("10.0.0.2");
  });

  it("should read trustProxy as a number of hops, and refuse nonsense at construction", () => {
    expect(proxyHops(undefined)).toBe(0);
    expect(proxyHops(false)).toBe(0);
    expect(proxyHops(true)).toBe(1);
    expect(proxyHops(2)).toBe(2);
    expect(() => proxyHops(-1)).toThrow(TypeError);
    expect(() => proxyHops(1.5)).toThrow(TypeError);
  });
});

describe("a request rewritten by a trusted proxy's forwarded headers", () => {
  it("should change only its URL and Host, and keep every other field of the request", () => {
    let gone = false;
    const abortListeners: (() => void)[] = [];
    // Required<>: a field added to McpHttpRequest must be added here, and is then checked below.
    const received: Required<McpHttpRequest> = {
      method: "POST",
      url: "http://10.0.0.5:3000/mcp?x=1",
      target: "/mcp?x=1",
      header: (name) =>
        ({
          host: "10.0.0.5:3000",
          "x-forwarded-host": "mcp.example.com",
          "x-forwarded-proto": "https",
        })[name] ?? null,
      body: async () => ({ kind: "text", text: "{}" }),
      signal: new AbortController().signal,
      get aborted() {
        return gone;
      },
      onAbort: (listener) => abortListeners.push(listener),
      localAddress: "10.0.0.5",
      remoteAddress: "10.0.0.2",
      remotePort: 51234,
      httpVersion: "1.1",
      context: () => ({ user: "ada" }),
    };
    const forwarded = asForwarded(received, 1);
    expect(forwarded.url).toBe("https://mcp.example.com/mcp?x=1");
    expect(forwarded.header("host")).toBe("mcp.example.com");
    expect(forwarded.header("x-forwarded-proto")).toBe("https");
    for (const key of Object.keys(received) as (keyof McpHttpRequest)[]) {
      if (key === "url" || key === "header" || key === "body" || key === "onAbort") continue;
      expect(forwarded[key], key).toBe(received[key]);
    }
    // Live, not copied: the disconnect seen after the wrapper was made.
    gone = true;
    expect(forwarded.aborted).toBe(true);
    const heard: string[] = [];
    forwarded.onAbort?.(() => heard.push("abort"));
    for (const listener of abortListeners) listener();
    expect(heard).toEqual(["abort"]);
  });
});
