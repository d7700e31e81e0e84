import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * The bare modules a source file reaches through static imports (`import ... from`,
 * `export ... from`), following relative ones; `import()` is left out, as a bundler builds a
 * lazily loaded module into a chunk of its own that an edge route never runs.
 */
function staticBareImports(entry: string): Set<string> {
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    // Doc comments keep their @example code, whose imports are no part of the module.
    const source = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "");
    for (const match of source.matchAll(
      /^\s*(?:import|export)\s(?!type\s)[^'";]*?from\s*["']([^"']+)["']/gm,
    )) {
      const specifier = match[1]!;
      if (specifier.startsWith("."))
        visit(resolve(dirname(file), specifier.replace(/\.js$/, ".ts")));
      else bare.add(specifier);
    }
  };
  visit(entry);
  return bare;
}

// mcp-mount/gateway serves Web-standard runtimes too (proxyServer with httpUpstream,
// sdkUpstream or a client, on an edge route): only stdioUpstream needs Node, and it loads its
// child process support when it first starts a child.
describe("mcp-mount/gateway", () => {
  it("should import nothing of Node's until a stdio child is started", () => {
    const bare = staticBareImports(resolve(ROOT, "src/gateway/index.ts"));
    expect([...bare].filter((specifier) => specifier.startsWith("node:"))).toEqual([]);
  });
});
