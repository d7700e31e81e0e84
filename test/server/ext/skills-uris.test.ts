import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient } from "../../../src/client/index.js";
import { registerSkillDirectory } from "../../../src/fs/skills.js";
import { createMcpHandler, McpServer, registerSkill } from "../../../src/index.js";
import { type Mounted, mount } from "../../helpers/transports.js";

/** File names with a space, `#`, `?`, `%`, a literal `%2e%2e`, and dots that are no dot-segment. */
const ODD_FILES: Record<string, string> = {
  "my notes.md": "spaces\n",
  "a#b.md": "hash\n",
  "what?.md": "query\n",
  "100%.md": "percent\n",
  "%2e%2e": "encoded dot-dot\n",
  "%2e%2e/up.md": "below an encoded dot-dot\n",
  "...": "three dots\n",
  "dir with space/inner #1.md": "nested\n",
  "ünïcode/ファイル.md": "unicode\n",
};

const sha256 = (text: string) => `sha256:${createHash("sha256").update(text).digest("hex")}`;

/** Serves `server` on a real socket and connects a client to it. */
async function served(server: McpServer): Promise<{ client: McpClient; mounted: Mounted }> {
  const mounted = await mount("node", createMcpHandler(server, { secret: "uris" }));
  return { client: await McpClient.connect(mounted.url), mounted };
}

/** A URI that parses back to itself: no fragment, no query, no dot-segment removed. */
function expectInert(uri: string): void {
  const url = new URL(uri);
  expect({ uri, hash: url.hash, search: url.search, href: url.href }).toEqual({
    uri,
    hash: "",
    search: "",
    href: uri,
  });
}

describe("skill URIs of odd names (percent-encoded per segment)", () => {
  let client: McpClient;
  let mounted: Mounted;
  beforeAll(async () => {
    const server = new McpServer({ name: "odd", version: "1" });
    registerSkill(server, {
      prefix: "acme corp/x#y",
      name: "odd",
      description: "Odd names",
      instructions: "# Odd\n",
      files: ODD_FILES,
    });
    ({ client, mounted } = await served(server));
  });
  afterAll(async () => {
    await client.close();
    await mounted.close();
  });

  it("should list each file under one encoded URI that parses back to itself", async () => {
    const [skill] = await client.skills();
    expect(skill?.uri).toBe("skill://acme%20corp/x%23y/odd/SKILL.md");
    const uris = (skill!.resources as { uri: string }[]).map((file) => file.uri);
    const root = "skill://acme%20corp/x%23y/odd";
    expect(uris.sort()).toEqual(
      [
        `${root}/SKILL.md`,
        `${root}/my%20notes.md`,
        `${root}/a%23b.md`,
        `${root}/what%3F.md`,
        `${root}/100%25.md`,
        `${root}/%252e%252e`,
        `${root}/%252e%252e/up.md`,
        `${root}/...`,
        `${root}/dir%20with%20space/inner%20%231.md`,
        `${root}/%C3%BCn%C3%AFcode/%E3%83%95%E3%82%A1%E3%82%A4%E3%83%AB.md`,
      ].sort(),
    );
    for (const uri of uris) expectInert(uri);
  });

  it("should read every file back by its URI, verified against its digest", async () => {
    const [skill] = await client.skills();
    for (const [path, text] of Object.entries(ODD_FILES)) {
      const entry = (skill!.resources as { uri: string; digest: string }[]).find(
        (file) => decodeURIComponent(file.uri.slice(skill!.root.length + 1)) === path,
      );
      expect(entry?.digest, path).toBe(sha256(text));
      expect(await skill!.readText(entry!.uri), path).toBe(text);
    }
  });

  it("should list directories by encoded URI and decoded name", async () => {
    const [skill] = await client.skills();
    const children = await client.request("resources/directory/read", { uri: skill!.root });
    const named = (children.resources as { name: string; uri: string }[]).map(
      ({ name, uri }) => [name, uri.slice(skill!.root.length + 1)] as const,
    );
    expect(named).toContainEqual(["dir with space", "dir%20with%20space"]);
    expect(named).toContainEqual(["%2e%2e", "%252e%252e"]);
    expect(named).toContainEqual(["a#b.md", "a%23b.md"]);
    const inner = await client.request("resources/directory/read", {
      uri: `${skill!.root}/dir%20with%20space`,
    });
    expect(inner.resources).toEqual([
      expect.objectContaining({
        uri: `${skill!.root}/dir%20with%20space/inner%20%231.md`,
        name: "inner #1.md",
      }),
    ]);
  });
});

describe("skill limits", () => {
  const parts = { name: "big", description: "Big", instructions: "x" };

  it("should refuse more files than maxFiles, a file over maxFileBytes, more than maxTotalBytes", () => {
    const server = new McpServer({ name: "limits", version: "1" });
    const three = { "a.md": "a".repeat(100), "b.md": "b".repeat(100), "c.md": "c".repeat(100) };
    expect(() =>
      registerSkill(server, { ...parts, files: three, limits: { maxFiles: 3 } }),
    ).toThrow(/skill:\/\/big\/SKILL.md: 4 files, over maxFiles \(3\)/);
    expect(() =>
      registerSkill(server, { ...parts, files: three, limits: { maxFileBytes: 99 } }),
    ).toThrow(/a.md has 100 bytes, over maxFileBytes \(99\)/);
    expect(() =>
      registerSkill(server, { ...parts, files: three, limits: { maxTotalBytes: 300 } }),
    ).toThrow(/bytes in all, over maxTotalBytes \(300\)/);
    expect(() => registerSkill(server, { ...parts, limits: { maxFiles: 0 } })).toThrow(
      /Invalid skill limit maxFiles/,
    );
    expect(server.resources.size).toBe(0);
    registerSkill(server, { ...parts, files: three, limits: { maxFiles: 4 } });
    expect(server.resources.size).toBe(4);
  });

  it("should refuse a file over the default 8 MiB", () => {
    const server = new McpServer({ name: "limits", version: "1" });
    const big = new Uint8Array(8 * 1024 * 1024 + 1);
    expect(() => registerSkill(server, { ...parts, files: { "big.bin": big } })).toThrow(
      RangeError,
    );
  });

  it("should refuse a path that is no Unicode text", () => {
    const server = new McpServer({ name: "limits", version: "1" });
    expect(() => registerSkill(server, { ...parts, files: { "bad\ud800.md": "" } })).toThrow(
      /Invalid skill file path/,
    );
  });
});

describe("registerSkillDirectory with odd names and limits", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "skills-odd-"));
    await mkdir(join(dir, "team #1", "notes", "%2e%2e"), { recursive: true });
    await writeFile(
      join(dir, "team #1", "notes", "SKILL.md"),
      "---\nname: notes\ndescription: N\n---\n",
    );
    await writeFile(join(dir, "team #1", "notes", "%2e%2e", "what?.md"), "deep\n");
    await writeFile(join(dir, "team #1", "notes", "big.bin"), new Uint8Array(2048));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("should serve the files on disk under encoded URIs, each read back through the server", async () => {
    const server = new McpServer({ name: "fs", version: "1" });
    await registerSkillDirectory(server, dir);
    const { client, mounted } = await served(server);
    try {
      const [skill] = await client.skills();
      expect(skill?.uri).toBe("skill://team%20%231/notes/SKILL.md");
      const deep = "skill://team%20%231/notes/%252e%252e/what%3F.md";
      expect((skill!.resources as { uri: string }[]).map((file) => file.uri)).toContain(deep);
      expectInert(deep);
      expect(await skill!.readText(deep)).toBe("deep\n");
    } finally {
      await client.close();
      await mounted.close();
    }
  });

  it("should refuse a skill over its limits before reading the file, registering none", async () => {
    const server = new McpServer({ name: "fs", version: "1" });
    await expect(
      registerSkillDirectory(server, dir, { limits: { maxFileBytes: 1024 } }),
    ).rejects.toThrow(/big.bin has 2048 bytes, over maxFileBytes \(1024\)/);
    await expect(registerSkillDirectory(server, dir, { limits: { maxFiles: 2 } })).rejects.toThrow(
      /over maxFiles \(2\)/,
    );
    expect(server.resources.size).toBe(0);
  });
});
