// A real MCP Apps host renders the example's app: headless Chromium loads a page that uses
// @modelcontextprotocol/ext-apps's own host side (AppBridge, PostMessageTransport) with our
// McpClient, both bundled by esbuild. The page lists the tools, reads the linked ui:// view,
// renders it in a sandboxed iframe; the view's button asks the host to call a server tool, and
// the answer shows in the view. A screenshot is kept under test-results/apps/.
import { mkdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { appToolMeta, McpServer } from "mcp-mount";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADDER_VIEW, registerAdderApp } from "../../examples/shared/adder-app.js";
import { type AppsHost, startAppsHost } from "../helpers/apps-host.js";
import { launchChromium } from "../helpers/browser.js";

const OUTPUT_DIR = resolve(import.meta.dirname, "../../test-results/apps");

let browser: Browser;
let host: AppsHost;

beforeAll(async () => {
  const server = new McpServer({ name: "adder-host-test", version: "1.0.0" });
  registerAdderApp(server);
  // A tool linked to the view that only the model may call: the host refuses it to the app.
  server.tool(
    {
      name: "model_only",
      _meta: appToolMeta({ resourceUri: ADDER_VIEW, visibility: ["model"] }),
    },
    () => "the model's",
  );
  [browser, host] = await Promise.all([launchChromium(), startAppsHost(server)]);
});

afterAll(async () => {
  await browser?.close();
  await host?.close();
});

describe("an MCP App in a real host (Chromium, ext-apps' AppBridge, our client)", () => {
  it("should render the view in a sandboxed iframe and carry its tool call to the server", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(error.message));
    await page.goto(host.url);
    await expect
      .poll(() => page.textContent("#status"), { timeout: 15_000 })
      .toBe("app initialized");

    const iframe = page.locator("iframe#app");
    expect(await iframe.getAttribute("sandbox")).toBe("allow-scripts");
    const view = page.frameLocator("iframe#app");
    await expect.poll(() => view.locator("#result").textContent()).toBe("Ready");
    // The view runs under the CSP its _meta.ui declared (no connectDomains): even a no-cors
    // request to the host's own server, which answers, is blocked; the host page itself may.
    const probe = (url: string) =>
      fetch(url, { mode: "no-cors" }).then(
        () => "fetched",
        () => "blocked",
      );
    const frame = page.frames().find((candidate) => candidate !== page.mainFrame())!;
    // The sandbox holds: without allow-same-origin the view's origin is opaque.
    expect(await frame.evaluate(() => window.origin)).toBe("null");
    expect(await frame.evaluate(probe, host.url)).toBe("blocked");
    expect(await page.evaluate(probe, host.url)).toBe("fetched");

    await view.locator("#add").click();
    await expect.poll(() => view.locator("#result").textContent()).toBe("2 + 3 = 5");
    expect(await page.evaluate(() => (window as { toolCalls?: string[] }).toolCalls)).toEqual([
      "adder_add",
    ]);

    // The view asking for a tool whose visibility leaves out "app" gets an error, not a call.
    const refused = await frame.evaluate(() =>
      (window as unknown as { request(method: string, params: object): Promise<unknown> })
        .request("tools/call", { name: "model_only", arguments: {} })
        .then(
          () => "called",
          (error: Error) => error.message,
        ),
    );
    expect(refused).toContain("not callable by the app");
    expect(await page.evaluate(() => (window as { toolCalls?: string[] }).toolCalls)).toEqual([
      "adder_add",
    ]);

    await mkdir(OUTPUT_DIR, { recursive: true });
    const file = join(OUTPUT_DIR, "adder.png");
    await page.screenshot({ path: file });
    expect((await stat(file)).size).toBeGreaterThan(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
