import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { McpError } from "../../src/protocol/errors.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import { PendingRequests, settleWithReply } from "../../src/protocol/pending-requests.js";

describe("PendingRequests", () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("should send once registered and resolve with the answer, then forget the id", async () => {
    const pending = new PendingRequests<JsonObject>();
    const send = vi.fn(() => expect(pending.has("s1")).toBe(true));
    const answer = pending.request("s1", send);
    expect(send).toHaveBeenCalledOnce();
    expect(pending.size).toBe(1);
    expect(pending.resolve("s1", { ok: true })).toBe(true);
    await expect(answer).resolves.toEqual({ ok: true });
    expect(pending.has("s1")).toBe(false);
    expect(pending.resolve("s1", {})).toBe(false);
  });

  it("should tell ids 1 and '1' apart", async () => {
    const pending = new PendingRequests<string>();
    const number = pending.request(1, () => {});
    const text = pending.request("1", () => {});
    pending.resolve("1", "text");
    pending.resolve(1, "number");
    await expect(number).resolves.toBe("number");
    await expect(text).resolves.toBe("text");
  });

  it("should reject with the given error after the timeout and forget the id", async () => {
    const pending = new PendingRequests<JsonObject>();
    const answer = pending.request("s1", () => {}, {
      timeoutMs: 100,
      timeoutError: () => new Error("The client did not answer ping within 100 ms"),
    });
    const outcome = expect(answer).rejects.toThrow("The client did not answer ping within 100 ms");
    vi.advanceTimersByTime(99);
    expect(pending.has("s1")).toBe(true);
    vi.advanceTimersByTime(1);
    await outcome;
    expect(pending.size).toBe(0);
  });

  it("should name the id and the wait in its default timeout error", async () => {
    const pending = new PendingRequests<JsonObject>();
    const answer = pending.request(7, () => {}, { timeoutMs: 50 });
    const outcome = expect(answer).rejects.toThrow("No answer to request 7 within 50 ms");
    vi.advanceTimersByTime(50);
    await outcome;
  });

  it("should stop its timer once answered", async () => {
    const pending = new PendingRequests<JsonObject>();
    const answer = pending.request("s1", () => {}, { timeoutMs: 100 });
    pending.resolve("s1", {});
    await expect(answer).resolves.toEqual({});
    expect(vi.getTimerCount()).toBe(0);
  });

  it("should reject with the signal's reason on abort, or with abortError when given", async () => {
    const pending = new PendingRequests<JsonObject>();
    const first = new AbortController();
    const second = new AbortController();
    const byReason = pending.request("a", () => {}, { signal: first.signal });
    const byOption = pending.request("b", () => {}, {
      signal: second.signal,
      abortError: () => new Error("elicitation/create was cancelled"),
    });
    first.abort(new Error("gone"));
    second.abort();
    await expect(byReason).rejects.toThrow("gone");
    await expect(byOption).rejects.toThrow("elicitation/create was cancelled");
    expect(pending.size).toBe(0);
  });

  it("should send nothing when the signal has already aborted", async () => {
    const pending = new PendingRequests<JsonObject>();
    const send = vi.fn();
    const answer = pending.request("s1", send, {
      signal: AbortSignal.abort(),
      abortError: () => new Error("ping was cancelled"),
      timeoutMs: 10,
    });
    await expect(answer).rejects.toThrow("ping was cancelled");
    expect(send).not.toHaveBeenCalled();
    expect(pending.size).toBe(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("should refuse an id already waiting, without sending", async () => {
    const pending = new PendingRequests<JsonObject>();
    const first = pending.request("s1", () => {});
    const send = vi.fn();
    await expect(pending.request("s1", send)).rejects.toThrow("already awaiting an answer");
    expect(send).not.toHaveBeenCalled();
    pending.resolve("s1", {});
    await expect(first).resolves.toEqual({});
  });

  it("should fail the request when send throws or rejects", async () => {
    const pending = new PendingRequests<JsonObject>();
    const thrown = pending.request("a", () => {
      throw new Error("broken pipe");
    });
    const rejected = pending.request("b", () => Promise.reject(new Error("not running")));
    await expect(thrown).rejects.toThrow("broken pipe");
    await expect(rejected).rejects.toThrow("not running");
    expect(pending.size).toBe(0);
  });

  it("should reject everything waiting on rejectAll", async () => {
    const pending = new PendingRequests<JsonObject>();
    const answers = [pending.request("a", () => {}), pending.request("b", () => {})];
    const closed = new Error("Connection closed");
    pending.rejectAll(closed);
    for (const answer of answers) await expect(answer).rejects.toBe(closed);
    expect(pending.size).toBe(0);
  });

  it("should find an entry by its payload, and give a payload by id", async () => {
    const pending = new PendingRequests<string, { progressToken: unknown }>();
    const answer = pending.request(3, () => {}, { payload: { progressToken: "p" } });
    expect(pending.payload(3)).toEqual({ progressToken: "p" });
    expect(pending.find((payload) => payload?.progressToken === "p")).toEqual({
      progressToken: "p",
    });
    expect(pending.find((payload) => payload?.progressToken === "q")).toBeUndefined();
    pending.resolve(3, "done");
    await answer;
    expect(pending.payload(3)).toBeUndefined();
  });
});

describe("settleWithReply", () => {
  it("should resolve with the result, or {} when the result is not an object", async () => {
    const pending = new PendingRequests<JsonObject>();
    const object = pending.request("a", () => {});
    const odd = pending.request("b", () => {});
    expect(settleWithReply(pending, "a", { result: { action: "accept" } })).toBe(true);
    expect(settleWithReply(pending, "b", { result: 5 })).toBe(true);
    await expect(object).resolves.toEqual({ action: "accept" });
    await expect(odd).resolves.toEqual({});
    expect(settleWithReply(pending, "c", { result: {} })).toBe(false);
  });

  it("should reject with an McpError carrying the reply's code, message and data", async () => {
    const pending = new PendingRequests<JsonObject>();
    const answer = pending.request("a", () => {});
    settleWithReply(pending, "a", { error: { code: -32601, message: "nope", data: { x: 1 } } });
    const error = await answer.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpError);
    expect(error).toMatchObject({ code: -32601, message: "nope", data: { x: 1 } });
  });
});
