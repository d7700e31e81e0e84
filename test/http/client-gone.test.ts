import { describe, expect, it } from "vitest";
import { onClientGone } from "../../src/http/streams/client-gone.js";
import type { McpHttpRequest } from "../../src/http/types.js";

// What a streamed answer and a modern call use to hear of their client leaving: the host's
// onAbort where it has one (the Node adapters), else the request's AbortSignal (fetch hosts).

function withSignal(signal: AbortSignal): McpHttpRequest {
  return { signal } as McpHttpRequest;
}

describe("onClientGone", () => {
  it("should listen through onAbort where the host has it, without reading the signal", () => {
    const listeners: (() => void)[] = [];
    const request = {
      onAbort: (listener: () => void) => listeners.push(listener),
      get signal(): AbortSignal {
        throw new Error("the signal was built");
      },
    } as unknown as McpHttpRequest;
    let gone = 0;
    const stop = onClientGone(request, () => gone++);
    expect(listeners).toHaveLength(1);
    stop();
    listeners[0]!();
    expect(gone).toBe(1);
  });

  it("should run once when the signal aborts, and not at all once stopped", () => {
    const leaving = new AbortController();
    let gone = 0;
    onClientGone(withSignal(leaving.signal), () => gone++);
    const staying = new AbortController();
    let stoppedGone = 0;
    const stop = onClientGone(withSignal(staying.signal), () => stoppedGone++);
    stop();
    leaving.abort();
    staying.abort();
    expect(gone).toBe(1);
    expect(stoppedGone).toBe(0);
  });

  it("should run at once for a client gone already", () => {
    let gone = 0;
    onClientGone(withSignal(AbortSignal.abort()), () => gone++);
    expect(gone).toBe(1);
  });
});
