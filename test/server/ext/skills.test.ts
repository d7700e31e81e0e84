import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveStdio } from "../../../src/adapters/stdio.js";
import { registerSkillDirectory } from "../../../src/fs/skills.js";
import {
  createMcpHandler,
  McpServer,
  registerSkill,
  SKILLS_EXTENSION,
} from "../../../src/index.js";
import { splitSkillMd } from "../../../src/protocol/skills.js";
import { assertExtSchema } from "../../helpers/ext-schema.js";
import { LEGACY_VERSION, legacyCall, legacyHeaders } from "../../helpers/legacy.js";
import { call, modernMeta, type Send, viaFetch } from "../../helpers/modern.js";
import { assertLegacyMessage, assertModernMessage } from "../../helpers/spec.js";

const PDF_MD = `---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
metadata:
  version: "2.1.0"
---

# PDF

Read references/FORMS.md first.
`;
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);

/** A server with a skill from text (nested files, bytes), one from parts under a prefix. */
function skillsServer(pageSize?: number): McpServer {
  const server = new McpServer({
    name: "skills",
    version: "1.0.0",
    ...(pageSize ? { pageSize } : {}),
  });
  registerSkill(server, {
    skillMd: PDF_MD,
    files: {
      "references/FORMS.md": "# Forms\n",
      "templates/regional/eu.md": "# EU\n",
      "assets/logo.png": PNG,
    },
  });
  registerSkill(server, {
    prefix: "acme/billing",
    name: "refunds",
    description: "Process refunds: per policy, 'quoted' # not a comment",
    instructions: "# Refunds\n",
    frontmatter: { license: "MIT", metadata: { tier: 2, tags: ["a", "b"] } },
  });
  return server;
}

const sha256 = (bytes: Uint8Array | string) =>
  `sha256:${createHash("sha256").update(bytes).digest("hex")}`;

/** The raw bytes of a resources/read result's first content. */
function bytesOf(result: Record<string, unknown>): Uint8Array {
  const [content] = result.contents as { text?: string; blob?: string }[];
  return content?.text !== undefined
    ? new TextEncoder().encode(content.text)
    : Buffer.from(content?.blob ?? "", "base64");
}

describe("the skills extension (SEP-2640), modern era", () => {
  const send: Send = viaFetch(createMcpHandler(skillsServer(), { secret: "s" }).fetch);

  it("should declare the extension with directoryRead in server/discover", async () => {
    const { result } = await call(send, "server/discover");
    const declared = (result.capabilities as { extensions: Record<string, unknown> }).extensions;
    expect(declared[SKILLS_EXTENSION]).toEqual({ directoryRead: true });
    assertExtSchema("skills", "SkillsCapability", declared[SKILLS_EXTENSION]);
  });

  it("should list every skill with complete, correct digests and sizes, and its frontmatter verbatim", async () => {
    const { result } = await call(send, "skills/list");
    assertExtSchema("skills", "ListSkillsResult", result);
    assertExtSchema("skills", "Cacheable", result);
    const skills = result.skills as {
      uri: string;
      frontmatter: Record<string, unknown>;
      resources: { uri: string; digest: string; size: number }[];
    }[];
    expect(skills.map((skill) => skill.uri)).toEqual([
      "skill://pdf-processing/SKILL.md",
      "skill://acme/billing/refunds/SKILL.md",
    ]);
    expect(skills[0]?.resources.map((file) => file.uri).sort()).toEqual([
      "skill://pdf-processing/SKILL.md",
      "skill://pdf-processing/assets/logo.png",
      "skill://pdf-processing/references/FORMS.md",
      "skill://pdf-processing/templates/regional/eu.md",
    ]);
    for (const skill of skills) {
      for (const file of skill.resources) {
        const read = await call(send, "resources/read", { uri: file.uri });
        const bytes = bytesOf(read.result);
        expect(file.digest, file.uri).toBe(sha256(bytes));
        expect(file.size, file.uri).toBe(bytes.byteLength);
      }
      const skillMd = await call(send, "resources/read", { uri: skill.uri });
      const text = new TextDecoder().decode(bytesOf(skillMd.result));
      expect(splitSkillMd(text).frontmatter).toEqual(skill.frontmatter);
    }
    expect(skills[1]?.frontmatter).toEqual({
      name: "refunds",
      description: "Process refunds: per policy, 'quoted' # not a comment",
      license: "MIT",
      metadata: { tier: 2, tags: ["a", "b"] },
    });
  });

  it("should list SKILL.md as a text/markdown resource named and described from its frontmatter", async () => {
    const { result } = await call(send, "resources/list");
    expect(result.resources).toContainEqual({
      uri: "skill://pdf-processing/SKILL.md",
      name: "pdf-processing",
      description: "Extract, fill, and assemble PDF documents",
      mimeType: "text/markdown",
      size: new TextEncoder().encode(PDF_MD).byteLength,
    });
  });

  it("should get one skill by URI, and answer -32602 for a URI that is no skill", async () => {
    const { result } = await call(send, "skills/get", {
      uri: "skill://acme/billing/refunds/SKILL.md",
    });
    assertExtSchema("skills", "GetSkillResult", result);
    assertExtSchema("skills", "Cacheable", result);
    expect((result.skill as { uri: string }).uri).toBe("skill://acme/billing/refunds/SKILL.md");
    for (const uri of ["skill://nope/SKILL.md", "skill://acme/billing/refunds/SKILL.mdx", 7]) {
      const { error } = await call(send, "skills/get", { uri });
      expect(error?.code, String(uri)).toBe(-32602);
    }
  });

  it("should read directories: direct children, subdirectories as inode/directory, -32602 for a file", async () => {
    const root = await call(send, "resources/directory/read", { uri: "skill://pdf-processing" });
    assertExtSchema("skills", "ReadResourceDirectoryResult", root.result);
    expect(root.result.resources).toEqual([
      {
        uri: "skill://pdf-processing/SKILL.md",
        name: "SKILL.md",
        mimeType: "text/markdown",
        size: expect.any(Number),
      },
      { uri: "skill://pdf-processing/assets", name: "assets", mimeType: "inode/directory" },
      { uri: "skill://pdf-processing/references", name: "references", mimeType: "inode/directory" },
      { uri: "skill://pdf-processing/templates", name: "templates", mimeType: "inode/directory" },
    ]);
    const nested = await call(send, "resources/directory/read", {
      uri: "skill://pdf-processing/templates",
    });
    expect(nested.result.resources).toEqual([
      {
        uri: "skill://pdf-processing/templates/regional",
        name: "regional",
        mimeType: "inode/directory",
      },
    ]);
    for (const uri of [
      "skill://pdf-processing/SKILL.md",
      "skill://pdf-processing/missing",
      "skill://pdf",
      "test://x",
    ]) {
      const { error } = await call(send, "resources/directory/read", { uri });
      expect(error?.code, uri).toBe(-32602);
    }
  });

  it("should page skills/list and directory reads without splitting an entry", async () => {
    const paged = viaFetch(createMcpHandler(skillsServer(1), { secret: "s" }).fetch);
    const first = await call(paged, "skills/list");
    expect((first.result.skills as unknown[]).length).toBe(1);
    const second = await call(paged, "skills/list", { cursor: first.result.nextCursor });
    assertExtSchema("skills", "ListSkillsResult", second.result);
    expect((second.result.skills as { uri: string }[])[0]?.uri).toBe(
      "skill://acme/billing/refunds/SKILL.md",
    );
    expect(second.result.nextCursor).toBeUndefined();
    const dir = await call(paged, "resources/directory/read", { uri: "skill://pdf-processing" });
    expect(dir.result.nextCursor).toEqual(expect.any(String));
    const bad = await call(paged, "skills/list", { cursor: "not-a-cursor" });
    expect(bad.error?.code).toBe(-32602);
  });
});

describe("the skills extension, legacy era", () => {
  const send: Send = viaFetch(createMcpHandler(skillsServer(), { secret: "s" }).fetch);
  let sessionId: string;

  beforeAll(async () => {
    const response = await send({
      method: "POST",
      headers: legacyHeaders(undefined),
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: {
          protocolVersion: LEGACY_VERSION,
          capabilities: { extensions: { [SKILLS_EXTENSION]: {} } },
          clientInfo: { name: "t", version: "1" },
        },
      }),
    });
    const body = JSON.parse(response.text);
    assertLegacyMessage(body, "initialize");
    expect(body.result.capabilities.extensions).toEqual({
      [SKILLS_EXTENSION]: { directoryRead: true },
    });
    sessionId = response.headers.get("mcp-session-id")!;
    await legacyCall(send, sessionId, "notifications/initialized");
  });

  it("should serve skills/list, skills/get and directory reads in the session", async () => {
    const list = await legacyCall(send, sessionId, "skills/list", {});
    assertExtSchema("skills", "ListSkillsResult", list.result);
    expect(list.result.ttlMs).toBeUndefined();
    expect((list.result.skills as unknown[]).length).toBe(2);
    const get = await legacyCall(send, sessionId, "skills/get", {
      uri: "skill://pdf-processing/SKILL.md",
    });
    assertExtSchema("skills", "GetSkillResult", get.result);
    const dir = await legacyCall(send, sessionId, "resources/directory/read", {
      uri: "skill://pdf-processing/references",
    });
    assertExtSchema("skills", "ReadResourceDirectoryResult", dir.result);
    const unknown = await legacyCall(send, sessionId, "skills/get", { uri: "skill://x/SKILL.md" });
    expect(unknown.error?.code).toBe(-32602);
  });
});

describe("the skills extension on stdio", () => {
  it("should declare it to both eras and serve its methods", async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    const running = serveStdio(skillsServer(), { input, output, secret: "s", onError: () => {} });
    const lines: Record<string, unknown>[] = [];
    let buffer = "";
    output.on("data", (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, at)));
        buffer = buffer.slice(at + 1);
      }
    });
    const answer = async (id: number) => {
      await expect.poll(() => lines.find((line) => line.id === id)).toBeDefined();
      return lines.find((line) => line.id === id) as { result: Record<string, unknown> };
    };
    const meta = modernMeta();
    const write = (message: unknown) => input.write(`${JSON.stringify(message)}\n`);
    write({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } });
    write({ jsonrpc: "2.0", id: 2, method: "skills/list", params: { _meta: meta } });
    write({
      jsonrpc: "2.0",
      id: 3,
      method: "initialize",
      params: {
        protocolVersion: LEGACY_VERSION,
        capabilities: {},
        clientInfo: { name: "t", version: "1" },
      },
    });
    const discover = await answer(1);
    assertModernMessage(discover, "server/discover");
    expect(discover.result.capabilities).toMatchObject({
      extensions: { [SKILLS_EXTENSION]: { directoryRead: true } },
    });
    const list = await answer(2);
    assertModernMessage(list, "skills/list");
    assertExtSchema("skills", "ListSkillsResult", list.result);
    assertExtSchema("skills", "Cacheable", list.result);
    const initialize = await answer(3);
    assertLegacyMessage(initialize, "initialize");
    expect(initialize.result.capabilities).toMatchObject({
      extensions: { [SKILLS_EXTENSION]: { directoryRead: true } },
    });
    write({ jsonrpc: "2.0", method: "notifications/initialized" });
    write({
      jsonrpc: "2.0",
      id: 4,
      method: "skills/get",
      params: { uri: "skill://pdf-processing/SKILL.md" },
    });
    const get = await answer(4);
    assertLegacyMessage(get, "skills/get");
    assertExtSchema("skills", "GetSkillResult", get.result);
    input.end();
    await running.done;
  });
});

describe("registering skills", () => {
  it("should declare nothing while no skill is registered, and stop once the last is removed", async () => {
    const server = new McpServer({ name: "none", version: "1" });
    const send = viaFetch(createMcpHandler(server, { secret: "s" }).fetch);
    const extensionsOf = async () =>
      ((await call(send, "server/discover")).result.capabilities as Record<string, unknown>)
        .extensions as Record<string, unknown> | undefined;
    expect((await extensionsOf())?.[SKILLS_EXTENSION]).toBeUndefined();
    const registration = registerSkill(server, { name: "a", description: "A", instructions: "x" });
    expect((await extensionsOf())?.[SKILLS_EXTENSION]).toEqual({ directoryRead: true });
    expect(server.resources.has("skill://a/SKILL.md")).toBe(true);
    registration.remove();
    expect((await extensionsOf())?.[SKILLS_EXTENSION]).toBeUndefined();
    expect(server.resources.has("skill://a/SKILL.md")).toBe(false);
  });

  it("should refuse bad names, frontmatter, paths and duplicates", () => {
    const server = new McpServer({ name: "bad", version: "1" });
    const parts = { description: "d", instructions: "i" };
    expect(() => registerSkill(server, { name: "Bad-Name", ...parts })).toThrow(
      /Invalid skill name/,
    );
    expect(() => registerSkill(server, { name: "a--b", ...parts })).toThrow(/Invalid skill name/);
    expect(() => registerSkill(server, { skillMd: "# no frontmatter" })).toThrow(/frontmatter/);
    expect(() => registerSkill(server, { skillMd: "---\nname: x\n---\n" })).toThrow(/description/);
    expect(() => registerSkill(server, { skillMd: "---\nname: &a x\n---\n" })).toThrow(
      /Unsupported/,
    );
    expect(() => registerSkill(server, { name: "a", ...parts, prefix: "../x" })).toThrow(/prefix/);
    expect(() => registerSkill(server, { name: "a", ...parts, files: { "../up.md": "" } })).toThrow(
      /path/,
    );
    registerSkill(server, { name: "a", ...parts });
    expect(() => registerSkill(server, { name: "a", ...parts })).toThrow(/Duplicate skill/);
  });
});

describe("registerSkillDirectory (mcp-mount/skills-fs)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "skills-"));
    await mkdir(join(dir, "git-workflow", "scripts"), { recursive: true });
    await writeFile(
      join(dir, "git-workflow", "SKILL.md"),
      "---\nname: git-workflow\ndescription: Branches\n---\nBody\n",
    );
    await writeFile(join(dir, "git-workflow", "scripts", "run.sh"), "echo hi\n");
    await writeFile(join(dir, "git-workflow", "scripts", "blob.bin"), PNG);
    // Hidden files and folders (a checkout's secrets and history) are never served.
    await writeFile(join(dir, "git-workflow", ".env"), "TOKEN=secret\n");
    await mkdir(join(dir, "git-workflow", ".git"), { recursive: true });
    await writeFile(join(dir, "git-workflow", ".git", "config"), "[core]\n");
    await mkdir(join(dir, "acme", "billing", "refunds"), { recursive: true });
    await writeFile(
      join(dir, "acme", "billing", "refunds", "SKILL.md"),
      "---\nname: refunds\ndescription: Refunds\n---\n",
    );
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("should register each directory holding a SKILL.md, the directories above it as its prefix", async () => {
    const server = new McpServer({ name: "fs", version: "1" });
    const registration = await registerSkillDirectory(server, dir);
    const send = viaFetch(createMcpHandler(server, { secret: "s" }).fetch);
    const { result } = await call(send, "skills/list");
    assertExtSchema("skills", "ListSkillsResult", result);
    const skills = result.skills as { uri: string; resources: { uri: string; digest: string }[] }[];
    expect(skills.map((skill) => skill.uri)).toEqual([
      "skill://acme/billing/refunds/SKILL.md",
      "skill://git-workflow/SKILL.md",
    ]);
    expect(skills[1]?.resources.map((file) => file.uri).sort()).toEqual([
      "skill://git-workflow/SKILL.md",
      "skill://git-workflow/scripts/blob.bin",
      "skill://git-workflow/scripts/run.sh",
    ]);
    const blob = skills[1]?.resources.find((file) => file.uri.endsWith("blob.bin"));
    expect(blob?.digest).toBe(sha256(PNG));
    const read = await call(send, "resources/read", {
      uri: "skill://git-workflow/scripts/blob.bin",
    });
    expect(bytesOf(read.result)).toEqual(Buffer.from(PNG));
    registration.remove();
    expect((await call(send, "skills/list")).result.skills).toEqual([]);
  });

  it("should refuse a skill not named after its directory, registering none", async () => {
    await mkdir(join(dir, "misnamed"), { recursive: true });
    await writeFile(join(dir, "misnamed", "SKILL.md"), "---\nname: other\ndescription: x\n---\n");
    const server = new McpServer({ name: "fs", version: "1" });
    await expect(registerSkillDirectory(server, dir)).rejects.toThrow(/named after its directory/);
    expect(server.resources.size).toBe(0);
    await rm(join(dir, "misnamed"), { recursive: true });
  });
});
