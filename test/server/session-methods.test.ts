import { describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/protocol/errors.js";
import { answerSessionMethod, isSessionMethod } from "../../src/server/session-methods.js";

describe("answerSessionMethod", () => {
  it("should know the four session methods and nothing else", () => {
    for (const method of [
      "ping",
      "logging/setLevel",
      "resources/subscribe",
      "resources/unsubscribe",
    ]) {
      expect(isSessionMethod(method)).toBe(true);
    }
    expect(isSessionMethod("tools/call")).toBe(false);
    expect(isSessionMethod("initialize")).toBe(false);
  });

  it("should answer ping with an empty result and no change", () => {
    expect(answerSessionMethod("ping", {}, { subscriptions: [] })).toEqual({ result: {} });
  });

  it("should set a known log level and refuse an unknown one with InvalidParams", () => {
    expect(
      answerSessionMethod("logging/setLevel", { level: "info" }, { subscriptions: [] }),
    ).toEqual({ result: {}, change: { logLevel: "info" } });
    const outcome = answerSessionMethod(
      "logging/setLevel",
      { level: "loud" },
      { subscriptions: [] },
    );
    expect("error" in outcome && outcome.error.toJSON()).toEqual({
      code: ErrorCode.InvalidParams,
      message: "Unknown log level: loud",
    });
  });

  it("should give the new subscription list, leaving the state it read alone", () => {
    const subscriptions = new Set(["notes://1"]);
    expect(
      answerSessionMethod("resources/subscribe", { uri: "notes://2" }, { subscriptions }),
    ).toEqual({ result: {}, change: { subscriptions: ["notes://1", "notes://2"] } });
    expect(
      answerSessionMethod("resources/unsubscribe", { uri: "notes://1" }, { subscriptions }),
    ).toEqual({ result: {}, change: { subscriptions: [] } });
    expect([...subscriptions]).toEqual(["notes://1"]);
  });

  it("should refuse a subscription without a string uri with InvalidParams", () => {
    const outcome = answerSessionMethod("resources/subscribe", { uri: 1 }, { subscriptions: [] });
    expect("error" in outcome && outcome.error.toJSON()).toEqual({
      code: ErrorCode.InvalidParams,
      message: "uri must be a string",
    });
  });
});
