import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

// Headless Chromium for the browser tests: Debian's own binary (`apt-get install chromium`;
// `.ci/run` installs it when missing), driven by playwright-core. Nothing is downloaded.

/** Where the Chromium binary is: CHROMIUM_PATH, else Debian's. */
export function chromiumPath(): string {
  const path = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
  if (!existsSync(path))
    throw new Error(
      `no Chromium at ${path}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH`,
    );
  return path;
}

/** Starts a headless Chromium; close it when done. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Containers run as root without user namespaces; /dev/shm is often small.
    args: ["--no-sandbox", "--disable-dev-shm-usage"],
  });
}
