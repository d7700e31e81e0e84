import { afterEach, describe, expect, it, vi } from "vitest";
import { browserCommand } from "../../src/cli/login.js";
import { loopbackRedirect } from "../../src/client/oauth/loopback.js";

afterEach(() => {
  vi.useRealTimers();
});

describe("loopbackRedirect (RFC 8252 §7.3)", () => {
  it("should answer only the redirect carrying the state it sent, not a forged one", async () => {
    const forged: number[] = [];
    const loopback = await loopbackRedirect({
      onAuthorizationUrl: async (authorizationUrl) => {
        // A page in the user's browser (or another local process) hits the listener first.
        const forgery = await fetch(`${loopback.redirectUri}?code=attacker-code&state=guess`);
        forged.push(forgery.status);
        await forgery.body?.cancel();
        const state = authorizationUrl.searchParams.get("state")!;
        await (await fetch(`${loopback.redirectUri}?code=real-code&state=${state}`)).text();
      },
    });
    try {
      const authorizationUrl = new URL("https://as.example/authorize?state=s-123");
      const back = new URL(await loopback.redirect(authorizationUrl));
      expect(back.searchParams.get("code")).toBe("real-code");
      expect(forged).toEqual([400]);
    } finally {
      await loopback.close();
    }
  });

  it("should leave no timer behind when showing the URL fails", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const loopback = await loopbackRedirect({
      onAuthorizationUrl: () => {
        throw new Error("no browser");
      },
    });
    try {
      await expect(
        loopback.redirect(new URL("https://as.example/authorize?state=s")),
      ).rejects.toThrow("no browser");
      // A timer left would reject later, unhandled, and hold the process for five minutes.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      await loopback.close();
    }
  });
});

describe("the CLI's browser opener", () => {
  it("should hand the sign-in URL to no shell, whatever its query holds", () => {
    const url = new URL("https://as.example/authorize?client_id=a&calc&state=s");
    for (const platform of ["win32", "darwin", "linux"] as const) {
      const [command, args] = browserCommand(url, platform);
      expect(["cmd", "cmd.exe", "sh", "bash", "powershell"]).not.toContain(command.toLowerCase());
      expect(args.at(-1)).toBe(url.href);
    }
  });
});
