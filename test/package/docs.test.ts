// The README and the guides in docs/ stay true to the code: every link between them resolves
// (to a file, and to a heading when it names one), every `src/…` path they name exists, and
// the options reference lists exactly the options `createMcpHandler` takes.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { DOCS, documents, ROOT } from "../helpers/docs.js";

/** Markdown without its fenced code blocks (links and paths inside code are not prose). */
function prose(text: string): string {
  return text.replace(/```[\s\S]*?```/g, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

function anchorsOf(path: string): Set<string> {
  const text = prose(readFileSync(path, "utf8"));
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!)));
}

/** The options of `McpHandlerOptions` and the interfaces it extends, read from the source. */
function handlerOptions(): string[] {
  const read = (file: string) =>
    ts.createSourceFile(file, readFileSync(join(ROOT, file), "utf8"), ts.ScriptTarget.Latest);
  const membersOf = (source: ts.SourceFile, name: string): string[] => {
    const found = source.statements.find(
      (node): node is ts.InterfaceDeclaration =>
        ts.isInterfaceDeclaration(node) && node.name.text === name,
    );
    if (!found) throw new Error(`no interface ${name} in ${source.fileName}`);
    return found.members.flatMap((member) =>
      member.name && ts.isIdentifier(member.name) ? [member.name.text] : [],
    );
  };
  return [
    ...membersOf(read("src/http/handler-options.ts"), "McpHandlerOptions"),
    ...membersOf(read("src/server/ext/index.ts"), "ExtensionOptions"),
  ].sort();
}

describe("the README and the guides", () => {
  it("should link only to files and headings that exist", () => {
    const broken: string[] = [];
    let links = 0;
    for (const document of documents()) {
      const text = prose(readFileSync(document, "utf8"));
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue;
        links++;
        const [file, anchor] = target!.split("#");
        const path = file ? join(dirname(document), file) : document;
        if (!existsSync(path)) broken.push(`${relative(ROOT, document)}: ${target}`);
        else if (anchor && path.endsWith(".md") && !anchorsOf(path).has(anchor))
          broken.push(`${relative(ROOT, document)}: ${target} (no such heading)`);
      }
    }
    expect(links).toBeGreaterThan(30);
    expect(broken).toEqual([]);
  });

  it("should name only src/ paths that exist", () => {
    const missing: string[] = [];
    for (const document of documents()) {
      const text = readFileSync(document, "utf8");
      for (const [, path] of text.matchAll(/`(src\/[\w./-]+)`/g)) {
        if (!existsSync(join(ROOT, path!))) missing.push(`${relative(ROOT, document)}: ${path}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("should draw only folders that exist in the architecture's diagrams", () => {
    const text = readFileSync(join(DOCS, "architecture.md"), "utf8");
    const diagrams = [...text.matchAll(/```mermaid\n([\s\S]*?)```/g)].map((match) => match[1]!);
    expect(diagrams.length).toBeGreaterThanOrEqual(2);
    const folders = new Set(
      diagrams.flatMap((diagram) => [
        ...diagram.matchAll(/\b([a-z][\w-]*(?:\/[a-z][\w-]*)*)\/(?=[:"\s<)])/g),
      ]),
    );
    const named = [...folders].map((match) => match[1]!);
    const missing = named.filter(
      (folder) =>
        !["", "src", "src/http", "src/server"].some((base) => existsSync(join(ROOT, base, folder))),
    );
    expect(named).toEqual(expect.arrayContaining(["guards", "streams", "modern", "legacy"]));
    expect(missing).toEqual([]);
  });

  it("should list every option of createMcpHandler in the options reference, and no other", () => {
    const table = readFileSync(join(DOCS, "options.md"), "utf8");
    const listed = [...table.matchAll(/^\| ([^|]+) \|/gm)]
      .flatMap((row) => [...row[1]!.matchAll(/`(\w+)`/g)].map((name) => name[1]!))
      .sort();
    expect(listed).toEqual(handlerOptions());
  });

  it("should map every guide from the README", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    const unmapped = documents()
      .slice(1)
      .map((path) => relative(ROOT, path))
      .filter((guide) => !readme.includes(`](${guide})`));
    expect(unmapped).toEqual([]);
  });
});
