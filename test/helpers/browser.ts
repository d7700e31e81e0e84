import { type Browser, chromium } from "playwright-core";
import { findOnPath } from "../../examples/shared/redis-server.js";

// Headless Chromium for the browser tests, driven by playwright-core; nothing is downloaded.
// The system's Chromium when there is one (Debian's `chromium`), else the headless shell that
// the @sparticuz/chromium dev dependency carries inside the package (unpacked once, to
// /tmp/chromium, by the test command's set-up step: test/provision.ts).

/** Where a Chromium comes from: the environment, the system, or the npm package. */
export type ChromiumSource = "CHROMIUM_PATH" | "system" | "@sparticuz/chromium";

/** The Chromium binary the browser tests launch, and where it came from. */
export interface ChromiumBinary {
  path: string;
  source: ChromiumSource;
}

/** CHROMIUM_PATH, else `chromium` (or `chromium-browser`) on PATH, else the packaged one. */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumBinary> {
  if (env.CHROMIUM_PATH) return { path: env.CHROMIUM_PATH, source: "CHROMIUM_PATH" };
  const system = findOnPath("chromium", env.PATH) ?? findOnPath("chromium-browser", env.PATH);
  if (system) return { path: system, source: "system" };
  const { default: packaged } = await import("@sparticuz/chromium");
  return { path: await packaged.executablePath(), source: "@sparticuz/chromium" };
}

/**
 * Starts a headless Chromium; close it when done.
 *
 * Only our own flags, never @sparticuz/chromium's defaults: those are made for Lambda and
 * change what the tests exist to check (`--disable-web-security` turns CORS and the
 * same-origin policy off, `--disable-site-isolation-trials` and `--single-process` put
 * cross-origin frames in one process, `--allow-running-insecure-content` lifts mixed-content
 * blocking). Both binaries run with the same flags, so sandboxed iframes, CSP and cross-origin
 * fetches are enforced by the browser as a user's would.
 */
export async function launchChromium(): Promise<Browser> {
  const { path } = await findChromium();
  return chromium.launch({
    executablePath: path,
    headless: true,
    // Containers run as root without user namespaces; /dev/shm is often small. No background
    // networking: the machine has no network beyond loopback.
    args: [
      "--no-sandbox",
      "--disable-dev-shm-usage",
      "--disable-background-networking",
      "--disable-component-update",
    ],
  });
}
