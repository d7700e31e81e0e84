// `mcp-mount serve`'s command line: what it is read as, and what is refused before anything
// starts (the CLI prints the message with the usage and exits 2; test/cli/serve.test.ts shows it).
import { describe, expect, it } from "vitest";
import { parseCommandLine, UsageError } from "../../src/cli/command-line.js";

const serve = (...argv: string[]) => parseCommandLine(["serve", ...argv]);

describe("mcp-mount serve's command line", () => {
  it("should read a stdio upstream after -- verbatim, with the defaults", () => {
    expect(serve("--", "node", "server.js", "--port", "9", "-v")).toEqual({
      command: "serve",
      options: {
        port: 3000,
        host: "127.0.0.1",
        path: "/mcp",
        upstream: {
          kind: "stdio",
          command: "node",
          args: ["server.js", "--port", "9", "-v"],
          env: {},
          inheritEnv: false,
        },
        scope: "process",
        trustProxy: false,
        graceMs: 10_000,
      },
    });
  });

  it("should read every option", () => {
    const line = serve(
      "--port=0",
      "--host",
      "::1",
      "--path",
      "/gateway",
      "--auth-issuer",
      "https://auth.example.com",
      "--jwks-url",
      "https://auth.example.com/jwks.json",
      "--resource",
      "https://api.example.com/gateway",
      "--redis-cluster",
      "10.0.0.1:7000, [::1]:7001",
      "--cors",
      "https://app.example.com,http://localhost:5173/",
      "--rate-limit",
      "10/30s",
      "--scope",
      "principal",
      "--max-concurrency",
      "4",
      "--trust-proxy",
      "--allowed-hosts",
      "api.example.com",
      "--grace-ms",
      "500",
      "--upstream",
      "http://127.0.0.1:8080/mcp",
    );
    expect(line).toEqual({
      command: "serve",
      options: {
        port: 0,
        host: "::1",
        path: "/gateway",
        upstream: { kind: "http", url: "http://127.0.0.1:8080/mcp" },
        auth: {
          issuer: "https://auth.example.com",
          jwksUrl: "https://auth.example.com/jwks.json",
          resource: "https://api.example.com/gateway",
        },
        redis: {
          kind: "cluster",
          nodes: [
            { host: "10.0.0.1", port: 7000 },
            { host: "::1", port: 7001 },
          ],
        },
        origins: ["https://app.example.com", "http://localhost:5173"],
        allowedHosts: ["api.example.com"],
        rateLimit: { points: 10, windowMs: 30_000 },
        scope: "principal",
        maxConcurrency: 4,
        trustProxy: true,
        graceMs: 500,
      },
    });
  });

  it.each([
    ["60/1m", { points: 60, windowMs: 60_000 }],
    ["100", { points: 100, windowMs: 60_000 }],
    ["5/s", { points: 5, windowMs: 1_000 }],
    ["1000/1h", { points: 1000, windowMs: 3_600_000 }],
    ["3/2000ms", { points: 3, windowMs: 2_000 }],
  ])("should read --rate-limit %s", (text, rateLimit) => {
    const line = serve("--rate-limit", text, "--", "server");
    expect(line.command === "serve" && line.options.rateLimit).toEqual(rateLimit);
  });

  it("should read --redis as one node's URL", () => {
    const line = serve("--redis", "redis://127.0.0.1:6390/0", "--", "server");
    expect(line.command === "serve" && line.options.redis).toEqual({
      kind: "standalone",
      url: "redis://127.0.0.1:6390/0",
    });
  });

  it("should pass the variables --env names to the command, and our whole environment with --inherit-env", () => {
    process.env.SERVE_OPTIONS_TEST = "from here";
    const line = serve(
      "-e",
      "A=1",
      "--env",
      "B=x=y",
      "-e",
      "SERVE_OPTIONS_TEST",
      "--inherit-env",
      "--",
      "s",
    );
    expect(line.command === "serve" && line.options.upstream).toEqual({
      kind: "stdio",
      command: "s",
      args: [],
      env: { A: "1", B: "x=y", SERVE_OPTIONS_TEST: "from here" },
      inheritEnv: true,
    });
    delete process.env.SERVE_OPTIONS_TEST;
  });

  it("should answer --help with the usage, which names serve's options", () => {
    expect(serve("--help")).toEqual({ command: "help" });
    expect(serve("-h", "--", "server")).toEqual({ command: "help" });
  });

  it.each([
    [[], /name the upstream/],
    [["--upstream", "http://h/mcp", "--", "server"], /--upstream or a command, not both/],
    [["--upstream", "ftp://h/mcp"], /--upstream takes an http\(s\) URL/],
    [["--verbose", "--", "server"], /Unknown option '--verbose'.*go after --/],
    [["--auth-issuer", "https://a.example", "--", "server"], /--auth-issuer needs --jwks-url/],
    [["--jwks-url", "https://a.example/jwks", "--", "server"], /go with --auth-issuer/],
    [["--resource", "https://api.example/mcp", "--", "server"], /go with --auth-issuer/],
    [
      ["--auth-issuer", "https://a.example", "--jwks-url", "jwks.json", "--", "server"],
      /--jwks-url takes a URL/,
    ],
    [["--scope", "principal", "--", "server"], /--scope principal needs --auth-issuer/],
    [["--scope", "request", "--", "server"], /--scope is process, session or principal/],
    [["--port", "70000", "--", "server"], /--port takes a whole number up to 65535/],
    [["--port", "-1", "--", "server"], /--port/],
    [["--grace-ms", "1.5", "--", "server"], /--grace-ms takes a whole number/],
    [["--max-concurrency", "0", "--", "server"], /--max-concurrency is at least 1/],
    [["--path", "mcp", "--", "server"], /--path takes a path/],
    [["--rate-limit", "ten", "--", "server"], /--rate-limit takes <points>\/<window>/],
    [["--rate-limit", "10/500ms", "--", "server"], /whole number of seconds/],
    [["--rate-limit", "0/1m", "--", "server"], /at least 1 point/],
    [["--redis", "127.0.0.1:6379", "--", "server"], /--redis takes a redis:\/\//],
    [["--redis", "redis://h", "--redis-cluster", "h:1", "--", "s"], /not both/],
    [["--redis-cluster", "h", "--", "server"], /--redis-cluster takes host:port/],
    [["--cors", "app.example.com", "--", "server"], /--cors takes origins/],
    [["--cors", "https://app.example.com/path", "--", "server"], /--cors takes origins/],
    [["--trust-proxy=2", "--", "server"], /--trust-proxy/],
    [["--env", "A=1", "--upstream", "http://h/mcp"], /--env and --inherit-env go with a command/],
    [["--env", "1A=x", "--", "server"], /--env takes NAME=value or NAME/],
    [["--env", "SERVE_OPTIONS_UNSET_VARIABLE", "--", "server"], /is not set here/],
  ])("should refuse %j", (argv, message) => {
    expect(() => serve(...argv)).toThrow(UsageError);
    expect(() => serve(...argv)).toThrow(message);
  });

  it("should tell that serve comes first on the line", () => {
    expect(() => parseCommandLine(["--json", "serve", "--", "server"])).toThrow(
      /serve comes first/,
    );
  });
});
