// A minimal MCP Apps host for the browser, bundled by test/helpers/apps-host.ts: our McpClient
// talks to the server; @modelcontextprotocol/ext-apps's own AppBridge talks to the app's view in
// a sandboxed iframe. It lists the tools, reads the first one's linked ui:// view, renders it
// with the CSP its _meta.ui allows, and carries the view's tools/call to the server (refusing
// tools whose visibility leaves out "app").
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";
import { APP_MIME_TYPE, McpClient } from "../../../src/client/index.js";

type Csp = { connectDomains?: string[]; resourceDomains?: string[]; frameDomains?: string[] };

/** The view's Content Security Policy, from its `_meta.ui.csp` (undeclared: nothing allowed). */
function cspOf(csp: Csp = {}): string {
  const list = (domains: string[] | undefined, fallback: string) =>
    domains && domains.length > 0 ? domains.join(" ") : fallback;
  const resources = list(csp.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `connect-src ${list(csp.connectDomains, "'none'")}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
  ].join("; ");
}

const status = document.getElementById("status")!;
const say = (text: string) => {
  status.textContent = text;
};

async function main(): Promise<void> {
  const client = await McpClient.connect(new URL("/mcp", location.href), {
    clientInfo: { name: "mcp-mount-test-host", version: "1.0.0" },
    capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [APP_MIME_TYPE] } } },
  });
  const tools = await client.tools();
  const opener = tools.find((tool) => tool.modelVisible && tool.ui?.resourceUri);
  if (!opener?.ui?.resourceUri) throw new Error("no tool opens an app");
  const read = await client.readResource(opener.ui.resourceUri);
  const [view] = read.contents as {
    mimeType?: string;
    text?: string;
    _meta?: { ui?: { csp?: Csp } };
  }[];
  if (view?.mimeType !== APP_MIME_TYPE || typeof view.text !== "string")
    throw new Error("not an app view");
  const meta = `<meta http-equiv="Content-Security-Policy" content="${cspOf(view._meta?.ui?.csp)}">`;
  const html = view.text.replace(/<head>/i, `<head>${meta}`);

  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.cssText =
    "width: 480px; height: 260px; border: 1px solid #8c959f; border-radius: 6px";
  document.body.append(iframe);

  const bridge = new AppBridge(
    null,
    { name: "mcp-mount-test-host", version: "1.0.0" },
    {
      serverTools: {},
    },
  );
  bridge.oncalltool = async (params) => {
    const tool = tools.find((candidate) => candidate.serverName === params.name);
    // Hosts refuse a view's call to a tool that is not the app's (SEP-1865, visibility).
    if (!tool || (tool.ui?.visibility && !tool.ui.visibility.includes("app"))) {
      throw new Error(`Tool ${params.name} is not callable by the app`);
    }
    const result = await client.callTool(params.name, params.arguments ?? {});
    (window as { toolCalls?: string[] }).toolCalls?.push(params.name);
    return result as never;
  };
  bridge.oninitialized = () => say("app initialized");
  await bridge.connect(new PostMessageTransport(iframe.contentWindow!, iframe.contentWindow!));
  iframe.srcdoc = html;
  say("app loading");
}

(window as { toolCalls?: string[] }).toolCalls = [];
main().catch((error: unknown) => say(`host failed: ${String(error)}`));
