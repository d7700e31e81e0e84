import { describe, expect, it } from "vitest";
import { parseUriTemplate } from "../../src/server/uri-template.js";

describe("parseUriTemplate", () => {
  it.each([
    ["test://template/{id}/data", "test://template/42/data", { id: "42" }],
    ["file:///{+path}", "file:///a/b/c.txt", { path: "a/b/c.txt" }],
    ["notes://{id}", "notes://hello%20world", { id: "hello world" }],
    ["http://h{/seg,more}", "http://h/one/two", { seg: "one", more: "two" }],
    ["search://{?q,lang}", "search://?lang=en&q=mcp", { q: "mcp", lang: "en" }],
    ["x://{a}{.ext}", "x://file.json", { a: "file", ext: "json" }],
    ["x://m{;v}", "x://m;v=3", { v: "3" }],
    ["x://doc{#frag}", "x://doc#part", { frag: "part" }],
    ["x://{a},{b}", "x://1,2", { a: "1", b: "2" }],
  ])("should match %s against %s", (template, uri, expected) => {
    expect(parseUriTemplate(template).match(uri)).toEqual(expected);
  });

  it("should not match a different shape", () => {
    const template = parseUriTemplate("test://template/{id}/data");
    expect(template.match("test://template/42")).toBeUndefined();
    expect(template.match("test://template/a/b/data")).toBeUndefined();
    expect(template.variables).toEqual(["id"]);
  });

  it("should refuse a malformed template", () => {
    expect(() => parseUriTemplate("x://{a")).toThrow();
    expect(() => parseUriTemplate("x://{a b}")).toThrow();
  });
});
