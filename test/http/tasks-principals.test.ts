// Tasks belong to the principal that created them.
import { describe, expect, it } from "vitest";
import { bearerAuth } from "../../src/auth/index.js";
import { withBearer } from "../helpers/modern.js";
import { gate, suiteTaskEndpoints, task, tool } from "../helpers/task-server.js";
import { mount } from "../helpers/transports.js";

const { endpoint } = suiteTaskEndpoints();

describe("tasks and principals", () => {
  const auth = bearerAuth({
    authorizationServers: ["https://auth.example.com"],
    verify: (token) => ({ issuer: "https://auth.example.com", subject: token, scopes: [] }),
  });
  it("should hide a principal's task from every other principal", async () => {
    const { send } = endpoint({ auth });
    const alice = withBearer(send, "alice");
    const bob = withBearer(send, "bob");
    const taskId = (await tool(alice, "job")).result.taskId as string;
    const stolen = await task(bob, "tasks/get", taskId);
    const unknown = await task(bob, "tasks/get", "no-such-task");
    expect(stolen.error).toEqual(unknown.error);
    expect((await task(bob, "tasks/cancel", taskId)).error?.code).toBe(-32602);
    expect((await task(bob, "tasks/update", taskId, { inputResponses: {} })).error?.code).toBe(
      -32602,
    );
    expect((await task(alice, "tasks/get", taskId)).result.status).toBe("working");
    gate.release();
  });

  it("should tell apart principals that carry only a client id, over a socket", async () => {
    const clients = bearerAuth({
      authorizationServers: ["https://auth.example.com"],
      verify: (token) => ({ issuer: "https://auth.example.com", clientId: token, scopes: [] }),
    });
    const mounted = await mount("node", endpoint({ auth: clients }).mcp);
    try {
      const clientA = withBearer(mounted.send, "client-a");
      const clientB = withBearer(mounted.send, "client-b");
      const taskId = (await tool(clientA, "job")).result.taskId as string;
      const stolen = await task(clientB, "tasks/get", taskId);
      expect(stolen.error).toEqual((await task(clientB, "tasks/get", "no-such-task")).error);
      expect((await task(clientA, "tasks/get", taskId)).result.status).toBe("working");
    } finally {
      gate.release();
      await mounted.close();
    }
  });
});
