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
