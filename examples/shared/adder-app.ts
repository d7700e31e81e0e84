import { appToolMeta, type McpServer, registerAppResource } from "mcp-mount";

/** The view's `ui://` URI. */
export const ADDER_VIEW = "ui://mcp-mount-example/adder.html";

/**
 * The view: one HTML page that talks to its host over `postMessage` (MCP Apps, SEP-1865) with
 * no SDK: `ui/initialize`, then `ui/notifications/initialized`; its button asks the host to call
 * the server's app-only `adder_add` tool, and it shows the answer.
 */
export const ADDER_HTML = `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>Adder</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 16px; color: #1f2328; }
  button { font-size: 15px; padding: 6px 14px; }
  output { display: block; margin-top: 12px; font-size: 18px; font-weight: 600; }
</style>
</head>
<body>
<h1>Adder</h1>
<p>An MCP App served by mcp-mount: the sum is worked out by the server.</p>
<button id="add" disabled>Add 2 + 3 on the server</button>
<output id="result">Waiting for the host…</output>
<script>
  const button = document.getElementById("add");
  const output = document.getElementById("result");
  const pending = new Map();
  let nextId = 1;
  const post = (message) => window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  function request(method, params) {
    const id = nextId++;
    post({ id, method, params });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }
  window.addEventListener("message", (event) => {
    const message = event.data;
    if (event.source !== window.parent || !message || message.jsonrpc !== "2.0") return;
    if (message.method === undefined && pending.has(message.id)) {
      const waiting = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message));
      else waiting.resolve(message.result);
    } else if (message.method !== undefined && message.id !== undefined) {
      post({ id: message.id, result: {} }); // ping, ui/resource-teardown
    }
  });
  button.addEventListener("click", async () => {
    output.textContent = "Adding…";
    try {
      const result = await request("tools/call", { name: "adder_add", arguments: { a: 2, b: 3 } });
      output.textContent = result.content.map((block) => block.text).join(" ");
    } catch (error) {
      output.textContent = "Failed: " + error.message;
    }
  });
  request("ui/initialize", {
    appInfo: { name: "adder", version: "1.0.0" },
    appCapabilities: {},
    protocolVersion: "2026-01-26",
  }).then(() => {
    post({ method: "ui/notifications/initialized", params: {} });
    button.disabled = false;
    output.textContent = "Ready";
  });
</script>
</body>
</html>
`;

/**
 * Registers the example's MCP App: the view, `adder` (for the model; its result names the view
 * a host renders) and `adder_add` (only the view calls it: hosts keep it from the model).
 */
export function registerAdderApp<App>(server: McpServer<App>): void {
  registerAppResource(server, {
    uri: ADDER_VIEW,
    name: "adder",
    description: "Adds two numbers on the server at the press of a button",
    html: ADDER_HTML,
    ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true },
  });
  server.tool(
    {
      name: "adder",
      description: "Opens the adder app, which adds numbers on the server",
      _meta: appToolMeta({ resourceUri: ADDER_VIEW }),
      annotations: { readOnlyHint: true },
    },
    () => "The adder app is open: press its button to add 2 + 3 on the server.",
  );
  server.tool(
    {
      name: "adder_add",
      description: "Adds two numbers for the adder app",
      input: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      _meta: appToolMeta({ resourceUri: ADDER_VIEW, visibility: ["app"] }),
      annotations: { readOnlyHint: true },
    },
    ({ a, b }) => `${a} + ${b} = ${a + b}`,
  );
}
