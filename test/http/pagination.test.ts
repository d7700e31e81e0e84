import { describe, expect, it } from "vitest";
import { createMcpHandler } from "../../src/index.js";
import { createFixtureServer } from "../helpers/fixture-server.js";
import { call, viaFetch } from "../helpers/modern.js";

describe("pagination", () => {
  const server = createFixtureServer(undefined, 2);
  const mcp = createMcpHandler(server, { secret: "s" });
  const send = viaFetch(mcp.fetch);

  it.each([
    ["tools/list", "tools", () => server.tools.size],
    ["prompts/list", "prompts", () => server.prompts.size],
    // The static resources and the one that the template lists.
    ["resources/list", "resources", () => server.resources.size + 1],
  ] as const)(
    "should page %s with opaque cursors, in order, without gaps or repeats",
    async (method, key, count) => {
      const total = count();
      expect(total).toBeGreaterThan(1);
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const { result } = await call(send, method, cursor ? { cursor } : {});
        const items = result[key] as { name: string }[];
        expect(items.length).toBeLessThanOrEqual(2);
        seen.push(...items.map((item) => item.name));
        cursor = result.nextCursor as string | undefined;
        pages++;
      } while (cursor);
      expect(seen).toHaveLength(total);
      expect(new Set(seen).size).toBe(total);
      expect(pages).toBe(Math.ceil(total / 2));
    },
  );

  it("should answer an invalid cursor with -32602", async () => {
    for (const cursor of ["not-a-cursor", 42, btoa('{"o":-1}')]) {
      const { error } = await call(send, "tools/list", { cursor });
      expect(error?.code).toBe(-32602);
    }
  });
});
