import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { call, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The modern era through each transport: prompts, resources, completion and custom methods.
describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, { secret: "test-secret" }).send;

  describe("prompts", () => {
    it("should list and get prompts", async () => {
      const list = await call(send, "prompts/list");
      expect((list.result.prompts as { name: string }[]).map((p) => p.name)).toEqual([
        "greet",
        "many",
      ]);
      const got = await call(send, "prompts/get", {
        name: "greet",
        arguments: { who: "Ada", style: "warm" },
      });
      expect(got.result.messages).toEqual([
        { role: "user", content: { type: "text", text: "Say hello to Ada in a warm way" } },
      ]);
    });

    it("should reject a missing required argument and an unknown prompt with -32602", async () => {
      expect((await call(send, "prompts/get", { name: "greet", arguments: {} })).error?.code).toBe(
        -32602,
      );
      expect((await call(send, "prompts/get", { name: "nope" })).error?.code).toBe(-32602);
    });

    it("should complete prompt arguments, at most 100 values with hasMore", async () => {
      const r = await call(send, "completion/complete", {
        ref: { type: "ref/prompt", name: "greet" },
        argument: { name: "who", value: "al" },
      });
      expect(r.result.completion).toEqual({
        values: ["alice", "albert"],
        total: 2,
        hasMore: false,
      });
      const many = await call(send, "completion/complete", {
        ref: { type: "ref/prompt", name: "many" },
        argument: { name: "x", value: "" },
      });
      const completion = many.result.completion as {
        values: string[];
        hasMore: boolean;
        total: number;
      };
      expect(completion.values).toHaveLength(100);
      expect(completion).toMatchObject({ hasMore: true, total: 150 });
    });
  });

  describe("resources", () => {
    it("should list resources, including those a template lists", async () => {
      const { result } = await call(send, "resources/list");
      expect((result.resources as { uri: string }[]).map((r) => r.uri)).toEqual([
        "test://static",
        "test://binary",
        "test://items/1",
      ]);
    });

    it("should read text and binary resources with their cache hints", async () => {
      const text = await call(send, "resources/read", { uri: "test://static" });
      expect(text.result.contents).toEqual([
        { uri: "test://static", mimeType: "text/plain", text: "static text" },
      ]);
      expect(text.result).toMatchObject({ ttlMs: 5_000, cacheScope: "public" });
      const binary = await call(send, "resources/read", { uri: "test://binary" });
      expect(binary.result.contents).toEqual([
        { uri: "test://binary", mimeType: "application/octet-stream", blob: "AAEC/w==" },
      ]);
    });

    it("should read through a template and list templates", async () => {
      const item = await call(send, "resources/read", { uri: "test://items/42" });
      expect(item.result.contents).toEqual([
        { uri: "test://items/42", mimeType: "application/json", text: '{"id":"42"}' },
      ]);
      expect(item.result.cacheScope).toBe("private");
      const templates = await call(send, "resources/templates/list");
      expect(templates.result.resourceTemplates).toEqual([
        { uriTemplate: "test://items/{id}", name: "item", mimeType: "application/json" },
      ]);
    });

    it("should answer an unknown resource with -32602 in the modern era", async () => {
      const { error } = await call(send, "resources/read", { uri: "test://missing" });
      expect(error?.code).toBe(-32602);
    });

    it("should complete template variables", async () => {
      const r = await call(send, "completion/complete", {
        ref: { type: "ref/resource", uri: "test://items/{id}" },
        argument: { name: "id", value: "1" },
      });
      expect((r.result.completion as { values: string[] }).values).toEqual(["1", "10"]);
    });
  });

  describe("custom methods", () => {
    it("should dispatch a registered custom method", async () => {
      const { result } = await call(send, "fixture/echo", { value: 7 });
      expect(result.echoed).toBe(7);
    });
  });
});
