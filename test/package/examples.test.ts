import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
// Inside the repository, so `mcp-mount` resolves to the built package by its own name.
const DIR = join(ROOT, "test", ".examples");

/**
 * Names an example may use without declaring them, as the app around it would have them. This
 * file is a global script (no import or export), so an example that declares one of these names
 * itself simply shadows it. Keep it short: a self-contained example is better.
 */
const PRELUDE = `declare const server: import("mcp-mount").McpServer;
declare const mcp: import("mcp-mount").McpHandler;
declare const app: import("express").Express;
`;

/** An `@example` block, and where it was written. */
interface Example {
  code: string;
  source: string;
}

/** The source behind each subpath of `package.json` `exports`: `./dist/x.js` is `src/x.ts`. */
function entryFiles(): Map<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
    exports: Record<string, { default: string }>;
  };
  const entries = new Map<string, string>();
  for (const [subpath, target] of Object.entries(pkg.exports)) {
    entries.set(
      subpath,
      join(ROOT, target.default.replace(/^\.\/dist\//, "src/").replace(/\.js$/, ".ts")),
    );
  }
  return entries;
}

/** The entry file and every file it re-exports from, transitively: where its exports live. */
function filesBehind(entry: string): string[] {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, "utf8");
    const reExport = /^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+"(\.{1,2}\/[^"]+)\.js";/gm;
    for (const match of source.matchAll(reExport)) visit(join(dirname(file), `${match[1]}.ts`));
  };
  visit(entry);
  return [...seen];
}

/** The fenced ts blocks after each `@example` tag of the file's doc comments. */
function examplesIn(file: string): Example[] {
  const source = readFileSync(file, "utf8");
  const examples: Example[] = [];
  for (const comment of source.matchAll(/\/\*\*[\s\S]*?\*\//g)) {
    const firstLine = source.slice(0, comment.index).split("\n").length;
    const rows = comment[0].split("\n").map((row) => row.replace(/^\s*(?:\/\*\*|\*\/|\*) ?/, ""));
    const text = rows.join("\n");
    for (const tag of text.matchAll(/^@example\b/gm)) {
      const line = firstLine + text.slice(0, tag.index).split("\n").length - 1;
      // The example ends at the next block tag, outside its fence.
      const body = text.slice(tag.index + tag[0].length).split(/^@\w/m)[0]!;
      const fences = [...body.matchAll(/^```ts\n([\s\S]*?)\n```$/gm)];
      const where = `${relative(ROOT, file)}:${line}`;
      // An @example without a fenced ts block would never be checked: refuse it.
      if (fences.length === 0) examples.push({ code: "", source: where });
      for (const fence of fences) examples.push({ code: fence[1]!, source: where });
    }
  }
  return examples;
}

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe("the @example blocks of the public entry points", () => {
  const entries = entryFiles();
  const bySubpath = new Map(
    [...entries].map(([subpath, entry]) => [subpath, filesBehind(entry).flatMap(examplesIn)]),
  );
  const examples = [
    ...new Map([...bySubpath.values()].flat().map((e) => [`${e.source}\n${e.code}`, e])).values(),
  ];

  it("should be found for every subpath export", () => {
    for (const [subpath, found] of bySubpath) expect(found.length, subpath).toBeGreaterThan(0);
  });

  it("should each hold a fenced ts block", () => {
    expect(examples.filter((e) => e.code === "").map((e) => e.source)).toEqual([]);
  });

  it("should typecheck, strict, against the built package", async () => {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(join(DIR, "prelude.d.ts"), PRELUDE);
    const files = examples
      .filter((e) => e.code !== "")
      .map((example, i) => {
        // Named after where it was written, so tsc's errors point at the doc comment.
        const file = `${String(i).padStart(2, "0")}-${example.source.replace(/[/:.]/g, "-")}.ts`;
        // `export {}` makes each one a module, so examples never clash with each other.
        writeFileSync(join(DIR, file), `// ${example.source}\n${example.code}\nexport {};\n`);
        return file;
      });
    writeFileSync(
      join(DIR, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["es2023", "dom", "dom.iterable"],
          types: ["node"],
          skipLibCheck: true,
        },
        files: ["prelude.d.ts", ...files],
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const run = promisify(execFile);
    const result = await run(process.execPath, [tsc, "-p", join(DIR, "tsconfig.json")]).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe("");
  }, 120_000);
});
