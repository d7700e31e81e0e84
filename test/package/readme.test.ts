import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { documents, ROOT } from "../helpers/docs.js";

// Inside the repository, so `mcp-mount` resolves to the built package by its own name.
const DIR = join(ROOT, "test", ".readme");
const MARKER = "<!-- checked: test/package/readme.test.ts";

/** The TypeScript blocks the README and the guides mark as checked. */
function checkedBlocks(): string[] {
  const blocks: string[] = [];
  for (const document of documents()) {
    for (const part of readFileSync(document, "utf8").split(MARKER).slice(1)) {
      const match = /^[^\n]*\n```ts\n([\s\S]*?)\n```/.exec(part);
      if (match) blocks.push(match[1]!);
    }
  }
  return blocks;
}

afterAll(() => rmSync(DIR, { recursive: true, force: true }));

describe("the README and the guides", () => {
  it("should hold checked code that typechecks, strict, against the built package", async () => {
    const blocks = checkedBlocks();
    // The README's complete server and the client's sign-in, at least.
    expect(blocks.length).toBeGreaterThan(1);
    mkdirSync(DIR, { recursive: true });
    const files = blocks.map((code, i) => {
      const file = `block-${i}.ts`;
      writeFileSync(join(DIR, file), code);
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
          lib: ["es2023", "dom"],
          types: ["node"],
          skipLibCheck: true,
        },
        files,
      }),
    );
    const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");
    const run = promisify(execFile);
    const result = await run(process.execPath, [tsc, "-p", join(DIR, "tsconfig.json")]).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? String(error),
    );
    expect(result).toBe("");
  }, 60_000);
});
