import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { call, type Send } from "../helpers/modern.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The modern era through each transport: multi round-trip requests (input asked for, answered on retry).
describe.each(TRANSPORTS)("modern era through %s", (transport) => {
  const send: Send = suiteFixtureEndpoint(transport, { secret: "test-secret" }).send;

  describe("multi round-trip requests", () => {
    const elicitation = { elicitation: {} };

    it("should ask for input, then complete on the retry with the answers", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: { item: "a" } },
        { capabilities: elicitation },
      );
      expect(first.result.resultType).toBe("input_required");
      const requests = first.result.inputRequests as Record<
        string,
        { method: string; params: Record<string, unknown> }
      >;
      expect(Object.keys(requests)).toEqual(["confirm"]);
      expect(requests.confirm?.method).toBe("elicitation/create");
      expect(requests.confirm?.params.message).toBe("Delete a?");
      const second = await call(
        send,
        "tools/call",
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: { confirm: { action: "accept", content: { ok: true } } },
          requestState: first.result.requestState,
        },
        { capabilities: elicitation },
      );
      expect(second.result.structuredContent).toEqual({
        action: "accept",
        content: { ok: true },
        rounds: 2,
      });
    });

    it("should take answers a first request brings without requestState, in one round", async () => {
      const only = await call(
        send,
        "tools/call",
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: { confirm: { action: "accept", content: { ok: true } } },
        },
        { capabilities: elicitation },
      );
      expect(only.result.structuredContent).toEqual({
        action: "accept",
        content: { ok: true },
        rounds: 1,
      });
    });

    it("should refuse inputResponses that are not an object with -32602", async () => {
      for (const inputResponses of ["yes", ["a"], 1]) {
        const refused = await call(
          send,
          "tools/call",
          { name: "confirm", arguments: { item: "a" }, inputResponses },
          { capabilities: elicitation },
        );
        expect(refused.error?.code).toBe(-32602);
        expect(refused.error?.message).toMatch(/inputResponses must be an object/);
      }
    });

    it("should ask again, not fail, when the retry lacks the answer", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {} },
        { capabilities: elicitation },
      );
      const again = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, requestState: first.result.requestState },
        { capabilities: elicitation },
      );
      expect(again.result.resultType).toBe("input_required");
      expect(Object.keys(again.result.inputRequests as object)).toEqual(["confirm"]);
    });

    it("should carry earlier answers through several rounds", async () => {
      const caps = { elicitation: {}, sampling: {} };
      const r1 = await call(
        send,
        "tools/call",
        { name: "two_steps", arguments: {} },
        { capabilities: caps },
      );
      expect(Object.keys(r1.result.inputRequests as object)).toEqual(["step1"]);
      const r2 = await call(
        send,
        "tools/call",
        {
          name: "two_steps",
          arguments: {},
          inputResponses: { step1: { action: "accept", content: { v: "x" } } },
          requestState: r1.result.requestState,
        },
        { capabilities: caps },
      );
      expect(Object.keys(r2.result.inputRequests as object)).toEqual(["step2"]);
      const r3 = await call(
        send,
        "tools/call",
        {
          name: "two_steps",
          arguments: {},
          inputResponses: {
            step2: { role: "assistant", content: { type: "text", text: "y" }, model: "m" },
          },
          requestState: r2.result.requestState,
        },
        { capabilities: caps },
      );
      expect(r3.result.structuredContent).toEqual({
        first: { v: "x" },
        second: { type: "text", text: "y" },
      });
    });

    it("should ask again when an answer has the wrong shape", async () => {
      const r = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, inputResponses: { confirm: 12345 } },
        { capabilities: elicitation },
      );
      expect(r.result.resultType).toBe("input_required");
      const wrongShape = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: {}, inputResponses: { confirm: { nothing: true } } },
        { capabilities: elicitation },
      );
      expect(wrongShape.result.resultType).toBe("input_required");
    });

    it("should collect inputs asked for concurrently in one round", async () => {
      const r = await call(
        send,
        "tools/call",
        { name: "both_at_once", arguments: {} },
        { capabilities: { elicitation: {}, roots: {} } },
      );
      expect(Object.keys(r.result.inputRequests as object).sort()).toEqual([
        "client_roots",
        "name",
      ]);
    });

    it("should answer -32021 with HTTP 400 when the client lacks the capability", async () => {
      const { status, error } = await call(send, "tools/call", { name: "confirm", arguments: {} });
      expect(status).toBe(400);
      expect(error?.code).toBe(-32021);
      expect(error?.data).toEqual({ requiredCapabilities: { elicitation: {} } });
    });

    it("should reject tampered, foreign and mismatched request state with -32602", async () => {
      const first = await call(
        send,
        "tools/call",
        { name: "confirm", arguments: { item: "a" } },
        { capabilities: elicitation },
      );
      const state = first.result.requestState as string;
      const flipped = `${state.slice(0, -2)}${state.at(-2) === "A" ? "B" : "A"}${state.slice(-1)}`;
      const retry = (params: Record<string, unknown>) =>
        call(send, "tools/call", params, { capabilities: elicitation });
      const answers = { confirm: { action: "accept", content: { ok: true } } };
      for (const params of [
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: answers,
          requestState: flipped,
        },
        {
          name: "confirm",
          arguments: { item: "a" },
          inputResponses: answers,
          requestState: "garbage",
        },
        // Same state, other params: the digest no longer matches.
        { name: "confirm", arguments: { item: "b" }, inputResponses: answers, requestState: state },
      ]) {
        const { error } = await retry(params);
        expect(error?.code).toBe(-32602);
      }
      const otherMethod = await call(send, "prompts/get", {
        name: "greet",
        arguments: { who: "x" },
        requestState: state,
      });
      expect(otherMethod.error?.code).toBe(-32602);
    });
  });
});
