import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { renderFrontmatter, splitSkillMd } from "../../src/protocol/skills.js";
import { parseYaml, YamlError } from "../../src/protocol/yaml.js";

describe("parseYaml (the YAML subset of skill frontmatter)", () => {
  it("should read block mappings and sequences, flow collections, and core-schema scalars", () => {
    const text = [
      "name: pdf-processing",
      "description: Extract, fill, and assemble PDF documents # a comment",
      "version: 2.1",
      'quoted: "2.1"',
      "single: 'it''s'",
      'escaped: "tab\\there \\u00e9"',
      "empty:",
      "nothing: ~",
      "yes: true",
      "hex: 0x1F",
      "metadata:",
      "  author: me",
      "  nested:",
      "    deep: [a, 'b c', {x: 1}]",
      "tools:",
      "- Read",
      "- name: Bash",
      "  args: git",
      "continued: one",
      "  two",
    ].join("\n");
    expect(parseYaml(text)).toEqual({
      name: "pdf-processing",
      description: "Extract, fill, and assemble PDF documents",
      version: 2.1,
      quoted: "2.1",
      single: "it's",
      escaped: "tab\there é",
      empty: null,
      nothing: null,
      yes: true,
      hex: 31,
      metadata: { author: "me", nested: { deep: ["a", "b c", { x: 1 }] } },
      tools: ["Read", { name: "Bash", args: "git" }],
      continued: "one two",
    });
  });

  it("should read literal and folded block scalars with their chomping", () => {
    expect(parseYaml("a: |\n  one\n   two\n\nb: >-\n  three\n  four\n\n  five\n")).toEqual({
      a: "one\n two\n",
      b: "three four\nfive",
    });
  });

  it("should refuse what it does not support rather than misread it", () => {
    for (const text of [
      "a: &anchor x",
      "a: *alias",
      "a: !tag x",
      "a: 1\na: 2",
      "\tname: x",
      "a: [1, 2",
      'a: "open',
      "? complex\n: key",
      "a: 1\n  b: 2\n c: 3",
    ]) {
      expect(() => parseYaml(text), text).toThrow(YamlError);
    }
  });

  // A client parses the SKILL.md a server sends: hostile frontmatter must not stall or crash it.
  it("should refuse a key-less line of a million spaces without stalling", async () => {
    // The key pattern once backtracked over every space for every space: some 15 minutes for
    // this line, blocking the event loop (so it runs in a child, which is killed if it stalls).
    const script = [
      'import { parseYaml } from "./src/protocol/yaml.ts";',
      'try { parseYaml("a" + " ".repeat(1_000_000) + "b"); } catch (error) { console.log(error.name); }',
    ].join("\n");
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]);
    const killer = setTimeout(() => child.kill(), 30_000);
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    const [code] = (await once(child, "exit")) as [number | null];
    clearTimeout(killer);
    expect(code).toBe(0);
    expect(stdout.trim()).toBe("YamlError");
  }, 40_000);

  it("should refuse collections nested deeper than it reads, with a YamlError", () => {
    const flow = `a: ${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const block = Array.from({ length: 1_000 }, (_, depth) => `${" ".repeat(depth)}k:`).join("\n");
    for (const text of [flow, block]) expect(() => parseYaml(text)).toThrow(/nested deeper/);
    expect(parseYaml(`a: ${"[".repeat(50)}1${"]".repeat(50)}`)).toBeDefined();
  });

  it("should keep a __proto__ key as the mapping's own field", () => {
    const block = parseYaml("__proto__:\n  polluted: yes") as Record<string, unknown>;
    const flow = parseYaml("m: {__proto__: {polluted: yes}}") as { m: Record<string, unknown> };
    for (const map of [block, flow.m]) {
      expect(Object.keys(map)).toEqual(["__proto__"]);
      expect(Object.getPrototypeOf(map)).toBe(Object.prototype);
      expect(map.polluted).toBeUndefined();
    }
  });
});

describe("renderFrontmatter", () => {
  it("should write YAML that parses back to the same frontmatter", () => {
    const frontmatter = {
      name: "refunds",
      description: "Refunds: per policy # not a comment, 'quoted' and \"double\"",
      plain: "Just words",
      looksLikeNumber: "1.0",
      looksLikeBool: "true",
      padded: "  spaced  ",
      multiline: "line one\nline two",
      metadata: { tier: 2, tags: ["a", "b"], "io.example/key": null },
    };
    const { frontmatter: reread, body } = splitSkillMd(`${renderFrontmatter(frontmatter)}Body`);
    expect(reread).toEqual(frontmatter);
    expect(body).toBe("Body");
  });
});

describe("splitSkillMd", () => {
  it("should end the frontmatter only at a --- line of its own", () => {
    const text = "---\nname: a\ndescription: see below ---\n---\nBody\n";
    expect(splitSkillMd(text)).toEqual({
      frontmatter: { name: "a", description: "see below ---" },
      body: "Body\n",
    });
    expect(() => splitSkillMd("---\n---\nBody\n")).toThrow(YamlError);
  });
});
