import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpClient, Skill, SkillVerificationError } from "../../src/client/index.js";
import { stdio } from "../../src/client/stdio.js";
import { createMcpHandler, McpServer, registerSkill } from "../../src/index.js";
import { assertExtSchema } from "../helpers/ext-schema.js";

const SKILL_MD = "---\nname: pdf-processing\ndescription: Extract PDF text\n---\n\n# PDF\n";

/** A server with one skill, and a record of every method it is asked for. */
function skillServer(tamper?: { uri: string; text: string }) {
  const server = new McpServer({ name: "skills", version: "1.0.0" });
  registerSkill(server, {
    skillMd: SKILL_MD,
    files: { "references/FORMS.md": "# Forms\n", "scripts/run.py": "print(1)\n" },
  });
  const methods: string[] = [];
  const mcp = createMcpHandler(server, {
    secret: "s",
    onRequest: ({ method, name }) => {
      methods.push(name ? `${method} ${name}` : method);
    },
  });
  const fetch = async (input: string | URL | Request, init?: RequestInit) => {
    const response = await mcp.fetch(new Request(input, init));
    if (!tamper) return response;
    // A gateway rewriting one file on the way: the listing still promises the original bytes.
    const body = await response.text();
    const rewritten = body.includes(`"uri":"${tamper.uri}","mimeType"`)
      ? body.replace(/"text":"(?:[^"\\]|\\.)*"/, JSON.stringify({ text: tamper.text }).slice(1, -1))
      : body;
    return new Response(rewritten, { status: response.status, headers: response.headers });
  };
  return { mcp, methods, fetch };
}

describe.each(["modern", "legacy"] as const)("client.skills() (%s era)", (era) => {
  const server = skillServer();
  let client: McpClient;
  beforeAll(async () => {
    client = await McpClient.connect("http://127.0.0.1/mcp", { era, fetch: server.fetch });
  });
  afterAll(() => client.close());

  it("should list the skills and fetch no file until one is loaded", async () => {
    server.methods.length = 0;
    const [skill, ...others] = await client.skills();
    expect(others).toEqual([]);
    expect(skill).toMatchObject({
      uri: "skill://pdf-processing/SKILL.md",
      root: "skill://pdf-processing",
      name: "pdf-processing",
      description: "Extract PDF text",
    });
    assertExtSchema("skills", "SkillEntry", {
      uri: skill!.uri,
      frontmatter: skill!.frontmatter,
      resources: skill!.resources,
    });
    expect(server.methods).toEqual(["skills/list"]);

    const loaded = await skill!.load();
    expect(loaded.body).toBe("\n# PDF\n");
    expect(await skill!.readText("references/FORMS.md")).toBe("# Forms\n");
    expect(server.methods).toEqual([
      "skills/list",
      "resources/read skill://pdf-processing/SKILL.md",
      "resources/read skill://pdf-processing/references/FORMS.md",
    ]);
  });

  it("should get an unlisted skill by URI, and list its directories", async () => {
    const [skill] = await client.skills({ uri: "skill://pdf-processing/SKILL.md" });
    expect(skill?.name).toBe("pdf-processing");
    expect((await skill!.list()).map((child) => child.name)).toEqual([
      "SKILL.md",
      "references",
      "scripts",
    ]);
    expect((await skill!.list("scripts")).map((child) => child.uri)).toEqual([
      "skill://pdf-processing/scripts/run.py",
    ]);
    await expect(client.skills({ uri: "skill://nope/SKILL.md" })).rejects.toMatchObject({
      code: -32602,
    });
  });

  it("should refuse a file the skill does not list without reading it", async () => {
    const [skill] = await client.skills();
    server.methods.length = 0;
    await expect(skill!.read("secrets.md")).rejects.toBeInstanceOf(SkillVerificationError);
    expect(server.methods).toEqual([]);
  });
});

describe("a skill whose files do not match its entry", () => {
  it("should refuse a SKILL.md whose digest or frontmatter differs, and every read after", async () => {
    const changedBody = SKILL_MD.replace("# PDF", "# EVIL");
    const changedFrontmatter = SKILL_MD.replace("Extract PDF text", "Exfiltrate keys!");
    for (const text of [changedBody, changedFrontmatter, `${SKILL_MD}more`]) {
      const server = skillServer({ uri: "skill://pdf-processing/SKILL.md", text });
      const client = await McpClient.connect("http://127.0.0.1/mcp", { fetch: server.fetch });
      try {
        const [skill] = await client.skills();
        await expect(skill!.load()).rejects.toBeInstanceOf(SkillVerificationError);
        server.methods.length = 0;
        await expect(skill!.read("references/FORMS.md")).rejects.toBeInstanceOf(
          SkillVerificationError,
        );
        expect(server.methods).toEqual([]);
      } finally {
        await client.close();
      }
    }
  });

  it("should find none on a server that does not declare the extension", async () => {
    const plain = createMcpHandler(new McpServer({ name: "plain", version: "1" }), { secret: "s" });
    const client = await McpClient.connect("http://127.0.0.1/mcp", {
      fetch: (input, init) => plain.fetch(new Request(input, init)),
    });
    expect(await client.skills()).toEqual([]);
    await client.close();
  });
});

describe("client.skills() over stdio", () => {
  it("should list and load the skills of a stdio server, in both eras", async () => {
    for (const era of ["modern", "legacy"] as const) {
      const client = await McpClient.connect(
        stdio({
          command: process.execPath,
          args: ["--import", "tsx", "test/client/fixtures/skills-stdio-server.ts"],
        }),
        { era },
      );
      try {
        const skills = await client.skills();
        expect(
          skills.map((skill) => skill.uri),
          era,
        ).toEqual(["skill://pdf-processing/SKILL.md", "skill://acme/billing/refunds/SKILL.md"]);
        expect((await skills[1]!.load()).frontmatter.name).toBe("refunds");
      } finally {
        await client.close();
      }
    }
  });
});

// SEP-2640's own text gives a file's digest but no size: a server that leaves it out is still
// read, the digest checked; a size that is given and wrong still fails.
describe("a skill entry without sizes", () => {
  const text = "# Hello\n";
  const source = (body: string) => ({
    directoryRead: false,
    request: async () => ({}),
    readResource: async (uri: string) => ({
      contents: [{ uri, mimeType: "text/markdown", text: body }],
    }),
  });
  const entry = async (size?: number) => ({
    uri: "skill://hello/SKILL.md",
    frontmatter: { name: "hello", description: "Says hello" },
    resources: [
      {
        uri: "skill://hello/README.md",
        digest: `sha256:${createHash("sha256").update(text).digest("hex")}`,
        ...(size === undefined ? {} : { size }),
      },
    ],
  });

  it("should read the file, checking its digest only", async () => {
    const skill = new Skill((await entry()) as never, source(text));
    expect(await skill.readText("README.md")).toBe(text);
    const tampered = new Skill((await entry()) as never, source("# Bye\n"));
    await expect(tampered.readText("README.md")).rejects.toBeInstanceOf(SkillVerificationError);
  });

  it("should still refuse a size that is given and wrong", async () => {
    const skill = new Skill((await entry(99)) as never, source(text));
    await expect(skill.readText("README.md")).rejects.toThrow(/bytes where the entry says 99/);
  });
});
