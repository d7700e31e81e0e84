import { resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpClient, type McpClientOptions } from "../../src/client/index.js";
import { type StdioOptions, stdio } from "../../src/client/stdio.js";
import { callAndAbortOnProgress } from "./servers.js";

const ROOT = resolve(import.meta.dirname, "../..");

/** A test fixture run as a child process, the way a desktop client starts a server. */
function child(script: string, extra: Partial<StdioOptions> = {}): StdioOptions {
  return {
    command: process.execPath,
    args: ["--import", "tsx", `test/client/fixtures/${script}`],
    cwd: ROOT,
    ...extra,
  };
}

const onInput: McpClientOptions["onInput"] = {
  elicitation: () => ({ action: "accept", content: { ok: true } }),
  sampling: () => ({ role: "assistant", content: { type: "text", text: "sampled" }, model: "m" }),
  roots: () => [{ uri: "file:///work", name: "work" }],
};

describe("McpClient over stdio", () => {
  const open: McpClient[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.close()));
  });

  async function connect(options: StdioOptions, clientOptions: McpClientOptions = {}) {
    const client = await McpClient.connect(stdio(options), { onInput, ...clientOptions });
    open.push(client);
    return client;
  }

  it("should speak the modern era to our server: tools, MRTR input, progress, prompts, resources", async () => {
    const client = await connect(child("stdio-server.ts"));
    expect(client.era).toBe("modern");
    expect(client.server.serverInfo).toMatchObject({ name: "fixture" });
    const regional = (await client.tool("regional"))!;
    // x-mcp-header is an HTTP matter: stdio ignores it.
    expect(await regional.call({ region: "eu", query: "q" })).toEqual([
      { type: "text", text: "eu:undefined:q" },
    ]);
    expect((await client.callTool("two_steps")).structuredContent).toEqual({
      first: { ok: true },
      second: { type: "text", text: "sampled" },
    });
    const progress: number[] = [];
    await client.callTool("steps", {}, { onProgress: (p) => progress.push(p.progress) });
    expect(progress).toEqual([1, 2]);
    expect((await client.getPrompt("greet", { who: "ada" })).messages).toHaveLength(1);
    expect((await client.readResource("test://static")).contents).toHaveLength(1);
  });

  it("should cancel with notifications/cancelled, and route listen notifications by subscription", async () => {
    let stderr = "";
    const client = await connect(
      child("stdio-server.ts", { stderr: (chunk) => (stderr += chunk) }),
    );
    await expect(callAndAbortOnProgress(client, "slow", "stop")).rejects.toThrow("stop");
    await expect.poll(() => stderr).toContain("aborted:slow");
    const subscription = client.listen({ toolsListChanged: true });
    expect(await subscription.acknowledged).toEqual({ toolsListChanged: true });
    await client.callTool("add_tool");
    expect((await subscription.next()).value?.method).toBe("notifications/tools/list_changed");
    subscription.close();
  });

  it("should speak the legacy era when told to, answering server requests over the pipe", async () => {
    const client = await connect(child("stdio-server.ts"), { era: "legacy" });
    expect(client.era).toBe("legacy");
    expect((await client.callTool("confirm", { item: "a" })).structuredContent).toMatchObject({
      action: "accept",
      rounds: 1,
    });
  });

  it("should fall back to initialize with the official SDK v1 stdio server", async () => {
    const client = await connect(child("sdk-v1-stdio-server.ts"));
    expect(client.era).toBe("legacy");
    expect(client.server.serverInfo).toMatchObject({ name: "sdk-v1" });
    expect(await (await client.tool("echo"))!.call({ text: "pipe" })).toEqual([
      { type: "text", text: "pipe" },
    ]);
    expect((await client.callTool("ask", { item: "b" })).content).toEqual([
      { type: "text", text: JSON.stringify({ action: "accept", content: { ok: true } }) },
    ]);
  });

  it("should start the command with the env and cwd given, and only safe variables of ours", async () => {
    process.env.MCP_CLIENT_TEST_INHERITED = "inherited";
    const client = await connect(
      child("stdio-server.ts", { env: { MCP_CLIENT_TEST_GIVEN: "given" }, cwd: ROOT }),
    );
    const read = async (name: string) =>
      (await client.callTool("environment", { name })).structuredContent;
    expect(await read("MCP_CLIENT_TEST_GIVEN")).toEqual({ value: "given", cwd: ROOT });
    // By default only what a program needs to run is inherited: no stray secrets.
    expect(await read("MCP_CLIENT_TEST_INHERITED")).toMatchObject({ value: null });
    expect(await read("PATH")).toMatchObject({ value: process.env.PATH });
    const everything = await connect(child("stdio-server.ts", { inheritEnv: true }));
    expect(
      (await everything.callTool("environment", { name: "MCP_CLIENT_TEST_INHERITED" }))
        .structuredContent,
    ).toMatchObject({ value: "inherited" });
    delete process.env.MCP_CLIENT_TEST_INHERITED;
  });

  it("should end the child on close", async () => {
    const wire = stdio(child("stdio-server.ts"));
    const client = await McpClient.connect(wire);
    await client.close();
    expect(wire.child.exitCode !== null || wire.child.signalCode !== null).toBe(true);
  });

  it("should report a server that cannot start, with its stderr", async () => {
    await expect(
      McpClient.connect(
        stdio({
          command: process.execPath,
          args: ["-e", "console.error('no config'); process.exit(3)"],
        }),
      ),
    ).rejects.toThrow(/code 3.*no config/);
    await expect(McpClient.connect(stdio({ command: "/nonexistent/mcp-server" }))).rejects.toThrow(
      /ENOENT/,
    );
  });
});
