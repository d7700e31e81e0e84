// The shape of src/ that STYLE asks for, checked on every run: small files, small functions, no
// import circle, and layers that import downwards only.
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

function sourceFiles(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") ? [path] : [];
  });
}

const files = sourceFiles(SRC);
const name = (path: string) => relative(ROOT, path);

/** The src files a file imports (type-only imports too: they tie the files together as much). */
function importsOf(path: string): string[] {
  const info = ts.preProcessFile(readFileSync(path, "utf8"), true, true);
  return info.importedFiles
    .map((file) => file.fileName)
    .filter((spec) => spec.startsWith("."))
    .map((spec) => resolve(dirname(path), spec).replace(/\.js$/, ".ts"))
    .filter((target) => target.startsWith(SRC));
}

/** Groups of files that import each other, directly or around a ring (Tarjan's algorithm). */
function importCircles(graph: Map<string, string[]>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, counter);
    low.set(file, counter++);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) circles.push(group.map(name));
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/** Functions, methods and arrow functions longer than the limit, as `file:line name (n lines)`. */
function longFunctions(path: string): string[] {
  const text = readFileSync(path, "utf8");
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const walk = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_FUNCTION_LINES) {
        const label = node.name?.getText(source) ?? "(anonymous)";
        found.push(`${name(path)}:${start + 1} ${label} (${lines} lines)`);
      }
    }
    ts.forEachChild(node, walk);
  };
  walk(source);
  return found;
}

/** What each layer may import besides itself (DESIGN: one direction only, down). */
const LAYERS: Record<string, string[]> = {
  utils: [],
  protocol: ["utils"],
  store: ["protocol", "utils"],
  auth: ["protocol", "utils"],
  telemetry: ["protocol", "utils"],
  server: ["protocol", "store", "auth", "telemetry", "utils"],
  http: ["server", "protocol", "store", "auth", "telemetry", "utils"],
  adapters: ["http", "server", "protocol", "store", "auth", "telemetry", "utils"],
  fs: ["server", "protocol", "utils"],
  client: ["protocol", "telemetry", "utils"],
  // serve mounts a gateway on the HTTP endpoint: the top of the stack, like an app.
  cli: ["gateway", "adapters", "http", "server", "store", "auth", "client", "protocol", "utils"],
};

const layerOf = (path: string) => relative(SRC, path).split("/")[0]!;

describe("the layout of src/", () => {
  it("should have found the source files and their imports", () => {
    expect(files.length).toBeGreaterThan(100);
    expect(importsOf(join(SRC, "http/handler.ts"))).toContain(join(SRC, "http/router.ts"));
  });

  it(`should keep every file at or under ${MAX_FILE_LINES} lines`, () => {
    const long = files
      .map((path) => ({ path, lines: readFileSync(path, "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_FILE_LINES)
      .map(({ path, lines }) => `${name(path)} (${lines} lines)`);
    expect(long).toEqual([]);
  });

  it(`should keep every function at or under ${MAX_FUNCTION_LINES} lines`, () => {
    expect(files.flatMap(longFunctions)).toEqual([]);
  });

  it("should have no import circle", () => {
    const graph = new Map(files.map((path) => [path, importsOf(path)]));
    expect(importCircles(graph)).toEqual([]);
  });

  it("should import only downwards, between layers", () => {
    const upward = files.flatMap((path) => {
      const layer = layerOf(path);
      const allowed = LAYERS[layer];
      if (!allowed) return [];
      return importsOf(path)
        .filter((target) => {
          const to = layerOf(target);
          return to !== layer && to !== "index.ts" && !allowed.includes(to);
        })
        .map((target) => `${name(path)} -> ${name(target)}`);
    });
    expect(upward).toEqual([]);
  });

  it("should tell a circle when there is one (the checker itself)", () => {
    const graph = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(importCircles(graph).map((group) => group.length)).toEqual([3]);
  });
});
