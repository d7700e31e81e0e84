// dist/ as the build writes it (scripts/bundle.ts): each entry one module, the code entries share
// in chunks beside the main one, dependencies left as imports. A cold start then loads a few
// files of ours instead of 150 (bench/RESULTS.md, "A bundled dist/").
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { call, viaFetch } from "../helpers/modern.js";

const ROOT = resolve(fileURLToPath(new URL("../..", import.meta.url)));
const DIST = join(ROOT, "dist");
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));

/** Every JavaScript file under `folder`, relative to dist/. */
function scripts(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return scripts(path);
    return entry.name.endsWith(".js") ? [relative(DIST, path)] : [];
  });
}

/** The files of dist/ a module reaches through its relative imports, static and dynamic. */
function reached(file: string, into = new Set<string>()): Set<string> {
  if (into.has(file)) return into;
  into.add(file);
  const source = readFileSync(join(DIST, file), "utf8");
  for (const match of source.matchAll(/(?:from\s*|import\(\s*|import\s+)["'](\.[^"']+)["']/g))
    reached(relative(DIST, resolve(dirname(join(DIST, file)), match[1]!)), into);
  return into;
}

describe("the built dist/", () => {
  const entries: string[] = [
    ...Object.values(pkg.exports as Record<string, { default: string }>).map((t) => t.default),
    ...Object.values(pkg.bin as Record<string, string>),
  ].map((target) => target.replace(/^\.\/dist\//, ""));

  it("should hold JavaScript only for the entries, the webhook module and shared chunks", () => {
    const files = scripts(DIST);
    expect(files).toEqual(expect.arrayContaining(entries));
    const others = files.filter((file) => !entries.includes(file));
    // Nothing of src/'s layout: a chunk (or a module loaded by import()) in dist/'s root.
    expect(others.filter((file) => dirname(file) !== ".")).toEqual(["webhooks/index.js"]);
    // Declarations keep src/'s layout, for the types users' editors follow.
    expect(readdirSync(join(DIST, "server"))).toContain("mcp-server.d.ts");
  });

  it("should let the main entry reach a few files of dist/, not one per source module", () => {
    const files = reached("index.js");
    // 150 modules under tsc's per-file output.
    expect(files.size).toBeGreaterThan(1);
    expect(files.size).toBeLessThan(50);
  });

  it("should load the webhook module the events extension imports by a relative path", async () => {
    const built: typeof import("../../src/index.js") = await import(join(DIST, "index.js"));
    const server = new built.McpServer({ name: "bundle", version: "1.0.0" });
    server.event({ name: "note.created" });
    const mcp = built.createMcpHandler(server, { events: { webhooks: { allow: ["127.0.0.1"] } } });
    try {
      const params = {
        name: "note.created",
        delivery: { url: "http://127.0.0.1:9/hook", secret: `whsec_${"A".repeat(32)}` },
      };
      const exchange = await call(viaFetch(mcp.fetch), "events/subscribe", params);
      // Forbidden (no principal) is the webhook module's answer: a module that did not load
      // would fail the call with an internal error instead.
      expect(exchange.response).toMatchObject({ error: { code: -32024 } });
    } finally {
      await mcp.close();
    }
  });
});
