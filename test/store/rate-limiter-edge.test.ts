// The memory store's limiter on an edge runtime: bundled as an app's bundler would, it needs
// nothing of Node (rate-limiter-flexible's entry point would: it loads `cluster`).
import { runInNewContext } from "node:vm";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import type { McpStore } from "../../src/store/types.js";

const ROOT = new URL("../../", import.meta.url).pathname;

describe("the memory store's rate limiter, bundled for the edge", () => {
  it("should bundle without Node built-ins and charge budgets in a context without Node", async () => {
    const bundle = await build({
      stdin: {
        contents: 'export { memoryStore } from "./src/store/memory.ts";',
        resolveDir: ROOT,
        loader: "ts",
      },
      bundle: true,
      write: false,
      format: "iife",
      globalName: "edge",
      // "neutral" resolves no Node built-in: one anywhere in the graph fails the build.
      platform: "neutral",
      mainFields: ["module", "main"],
      logLevel: "silent",
      metafile: true,
    });
    const inputs = Object.keys(bundle.metafile.inputs);
    expect(inputs).toContain("node_modules/rate-limiter-flexible/lib/RateLimiterMemory.js");
    expect(inputs.filter((input) => input.endsWith("rate-limiter-flexible/index.js"))).toEqual([]);

    // Only what a Worker or the edge runtime offers: no process, require, Buffer or module.
    const sandbox = { setTimeout, clearTimeout, setInterval, clearInterval, console };
    const script = `${bundle.outputFiles[0]!.text}; edge`;
    const edge = runInNewContext(script, sandbox) as { memoryStore: () => McpStore };
    const store = edge.memoryStore();
    const limiter = await store.rateLimiter!({ points: 2, windowMs: 60_000 });
    expect(await limiter.consume("a", 2)).toMatchObject({ allowed: true, remaining: 0 });
    expect(await limiter.consume("a", 1)).toMatchObject({ allowed: false, remaining: 0 });
    expect(await limiter.consume("b", 1)).toMatchObject({ allowed: true, remaining: 1 });
    await store.close();
  });
});
