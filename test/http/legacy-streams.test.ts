import { describe, expect, it } from "vitest";
import { suiteFixtureEndpoint } from "../helpers/fixture-endpoint.js";
import { legacyCall, legacyHeaders, openSession } from "../helpers/legacy.js";
import { assertLegacyMessage } from "../helpers/spec.js";
import { SseReader } from "../helpers/stream.js";
import { TRANSPORTS } from "../helpers/transports.js";

// The legacy era through each transport: server requests on the POST stream, cancellation, and the
// GET stream with its resumption.
describe.each(TRANSPORTS)("legacy era through %s", (transport) => {
  const endpoint = suiteFixtureEndpoint(transport, { secret: "s", legacy: { maxSessions: 1_000 } });
  const { probe, send, server } = endpoint;

  /** Sends a request whose SSE response stays open, for streaming reads. */
  const stream = async (
    headers: Record<string, string>,
    body?: unknown,
    method = "POST",
    signal?: AbortSignal,
  ) => {
    const init: RequestInit = { method, headers, signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response =
      transport === "fetch"
        ? await endpoint.mcp.fetch(new Request(endpoint.mounted.url, init))
        : await fetch(endpoint.mounted.url, init);
    return { response, reader: response.body ? new SseReader(response.body) : undefined };
  };
  const nextValid = async (reader: SseReader, method: string) => {
    const message = await reader.next();
    if (message) assertLegacyMessage(message, method);
    return message;
  };

  describe("streams", () => {
    it("should send a server request on the POST stream and resume with the client's answer", async () => {
      const session = await openSession(send, { elicitation: {} });
      const { response, reader } = await stream(legacyHeaders(session), {
        jsonrpc: "2.0",
        id: 77,
        method: "tools/call",
        params: { name: "confirm", arguments: { item: "x" } },
      });
      expect(response.headers.get("content-type")).toBe("text/event-stream");
      const request = await nextValid(reader!, "tools/call");
      expect(request).toMatchObject({
        method: "elicitation/create",
        params: { message: "Delete x?" },
      });
      const answer = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: request?.id,
          result: { action: "accept", content: { ok: true } },
        }),
      });
      expect(answer.status).toBe(202);
      const final = await nextValid(reader!, "tools/call");
      expect(final).toMatchObject({
        id: 77,
        result: { structuredContent: { action: "accept", content: { ok: true }, rounds: 1 } },
      });
    });

    it("should abort the handler on notifications/cancelled", async () => {
      const session = await openSession(send);
      const before = probe.aborted.length;
      const { reader } = await stream(legacyHeaders(session), {
        jsonrpc: "2.0",
        id: "slow-1",
        method: "tools/call",
        params: { name: "slow", arguments: {}, _meta: { progressToken: 1 } },
      });
      expect((await nextValid(reader!, "tools/call"))?.method).toBe("notifications/progress");
      const cancelled = await send({
        method: "POST",
        headers: legacyHeaders(session),
        body: JSON.stringify({
          jsonrpc: "2.0",
          method: "notifications/cancelled",
          params: { requestId: "slow-1", reason: "test" },
        }),
      });
      expect(cancelled.status).toBe(202);
      await expect.poll(() => probe.aborted.length).toBe(before + 1);
    });

    it("should deliver list changes and subscribed resource updates on the GET stream, one stream per session", async () => {
      const session = await openSession(send);
      await legacyCall(send, session, "resources/subscribe", { uri: "test://static" });
      const { response, reader } = await stream(
        { ...legacyHeaders(session), accept: "text/event-stream" },
        undefined,
        "GET",
      );
      expect(response.status).toBe(200);
      const second = await stream(
        { ...legacyHeaders(session), accept: "text/event-stream" },
        undefined,
        "GET",
      );
      expect(second.response.status).toBe(409);
      const noAccept = await stream(
        { ...legacyHeaders(session), accept: "application/json" },
        undefined,
        "GET",
      );
      expect(noAccept.response.status).toBe(406);
      server.notifyResourceUpdated("test://other");
      server.notifyToolsListChanged();
      server.notifyResourceUpdated("test://static");
      expect(await nextValid(reader!, "")).toEqual({
        jsonrpc: "2.0",
        method: "notifications/tools/list_changed",
      });
      expect(await nextValid(reader!, "")).toEqual({
        jsonrpc: "2.0",
        method: "notifications/resources/updated",
        params: { uri: "test://static" },
      });
      await send({ method: "DELETE", headers: legacyHeaders(session) });
      await reader!.done;
    });

    it("should replay exactly what a cut GET stream missed after Last-Event-ID", async () => {
      const session = await openSession(send);
      const headers = { ...legacyHeaders(session), accept: "text/event-stream" };
      const first = await stream(headers, undefined, "GET");
      server.notifyToolsListChanged();
      expect((await first.reader!.next())?.method).toBe("notifications/tools/list_changed");
      const lastEventId = first.reader!.lastEventId!;
      expect(lastEventId).toBeTruthy();
      await first.reader!.cancel();
      server.notifyPromptsListChanged();
      server.notifyResourcesListChanged();
      const resumed = await stream({ ...headers, "last-event-id": lastEventId }, undefined, "GET");
      expect(resumed.response.status).toBe(200);
      expect((await resumed.reader!.next())?.method).toBe("notifications/prompts/list_changed");
      expect((await resumed.reader!.next())?.method).toBe("notifications/resources/list_changed");
      server.notifyToolsListChanged();
      expect((await resumed.reader!.next())?.method).toBe("notifications/tools/list_changed");
      expect(await resumed.reader!.next(200)).toBeUndefined();
      // Another session's event id replays nothing of this one.
      const other = await openSession(send);
      const foreign = await stream(
        { ...legacyHeaders(other), accept: "text/event-stream", "last-event-id": lastEventId },
        undefined,
        "GET",
      );
      expect(await foreign.reader!.next(200)).toBeUndefined();
      await send({ method: "DELETE", headers: legacyHeaders(session) });
      await send({ method: "DELETE", headers: legacyHeaders(other) });
    });
  });
});
