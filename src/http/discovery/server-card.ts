import type { Icon, Implementation } from "../../server/types.js";

/** The `$schema` of every Server Card (SEP-2127: one URL per major version, `v1` now). */
export const SERVER_CARD_SCHEMA =
  "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json";

/** The Server Card media type, which the card's responses and AI Catalog entries name. */
export const SERVER_CARD_MEDIA_TYPE = "application/mcp-server-card+json";

/** A value a client supplies or is given for a remote's URL template or header (SEP-2127). */
export interface ServerCardInput {
  description?: string;
  isRequired?: boolean;
  isSecret?: boolean;
  format?: "string" | "number" | "boolean" | "filepath";
  default?: string;
  placeholder?: string;
  value?: string;
  choices?: string[];
}

/** An HTTP header a remote needs or accepts, described for the client's configuration. */
export interface ServerCardHeader extends ServerCardInput {
  name: string;
  variables?: Record<string, ServerCardInput>;
}

/** Where and how to connect to the server over HTTP. */
export interface ServerCardRemote {
  type: "streamable-http" | "sse";
  /** The endpoint URL, or a template whose `{variables}` the client fills in. */
  url: string;
  headers?: ServerCardHeader[];
  variables?: Record<string, ServerCardInput>;
  supportedProtocolVersions?: string[];
}

/**
 * An MCP Server Card (SEP-2127, extension `io.modelcontextprotocol/server-card`): what a client
 * reads before it connects. It names the server and how to reach it, never its tools.
 */
export interface ServerCard {
  $schema: string;
  /** Reverse-DNS name with one slash, such as `com.example/weather`. */
  name: string;
  version: string;
  /** At most 100 characters. */
  description: string;
  title?: string;
  websiteUrl?: string;
  repository?: { url: string; source: string; subfolder?: string; id?: string };
  icons?: Icon[];
  remotes?: ServerCardRemote[];
  _meta?: Record<string, unknown>;
}

/**
 * The `serverCard` option: card fields that replace the ones generated from the server's info
 * and the endpoint's URL, and where the endpoint is for the documents served at the site's root.
 *
 * @example
 * ```ts
 * import { createMcpHandler, McpServer } from "mcp-mount";
 *
 * const server = new McpServer({ name: "weather", version: "1.0.0" });
 * const mcp = createMcpHandler(server, {
 *   serverCard: { name: "com.example/weather", description: "Forecasts for any city" },
 * });
 * ```
 */
export interface ServerCardOptions extends Partial<Omit<ServerCard, "$schema">> {
  /**
   * The endpoint's path (`/api/mcp`) or its full public URL, which the well-known documents at
   * the site's root (`/.well-known/ai-catalog.json`) point to: they cannot tell from their own
   * path where the endpoint is mounted. @default auth's `resource`, else `/mcp`
   */
  endpoint?: string;
}

/** SEP-2127's `name`: a reverse-DNS namespace, one slash, a name. */
const NAME = /^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/;
const MAX_TEXT = 100;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

function isCardName(name: string): boolean {
  return name.length >= 3 && name.length <= 200 && NAME.test(name);
}

/** Checks the option once, at construction: a card the schema refuses is a configuration error. */
export function checkServerCardOptions(options: ServerCardOptions): void {
  if (options.name !== undefined && !isCardName(options.name))
    throw new TypeError(
      `serverCard.name must be a reverse-DNS name with one slash (com.example/weather), not "${options.name}"`,
    );
  for (const field of ["description", "title"] as const) {
    const text = options[field];
    if (text !== undefined && (text.length === 0 || [...text].length > MAX_TEXT))
      throw new TypeError(`serverCard.${field} must be 1 to ${MAX_TEXT} characters long`);
  }
  const { endpoint } = options;
  if (endpoint !== undefined && !endpoint.startsWith("/") && !/^https?:\/\/[^\s/]/.test(endpoint))
    throw new TypeError(
      `serverCard.endpoint must be a path (/mcp) or an http(s) URL, not "${endpoint}"`,
    );
}

/** Text cut to the schema's 100 characters (code points, not UTF-16 units). */
function clipped(text: string): string {
  const chars = [...text];
  return chars.length <= MAX_TEXT ? text : `${chars.slice(0, MAX_TEXT - 1).join("")}…`;
}

/**
 * The card's `name` for a server whose own name is no reverse-DNS name: the public host,
 * reversed, as its namespace (`weather` on `mcp.example.com` is `com.example.mcp/weather`).
 */
function derivedName(name: string, hostname: string): string {
  if (isCardName(name)) return name;
  const host = hostname.replace(/^\[|\]$/g, "");
  const reversed =
    IPV4.test(host) || host.includes(":") ? host : host.split(".").reverse().join(".");
  const namespace = reversed.replace(/[^a-zA-Z0-9.-]/g, "-") || "localhost";
  const local = name.replace(/[^a-zA-Z0-9._-]/g, "-") || "server";
  return `${namespace}/${local}`.slice(0, 200);
}

/** What a card is made of besides the server's info and the option. */
export interface CardSource {
  /** The endpoint's public URL. */
  endpoint: string;
  /** The protocol versions the endpoint serves. */
  versions: readonly string[];
}

/**
 * The Server Card of `info` served at `source.endpoint`, with the option's fields over the
 * generated ones. Only what is public by design: the text forbids secrets and private topology.
 */
export function buildServerCard(
  info: Implementation,
  options: ServerCardOptions,
  source: CardSource,
): ServerCard {
  const { endpoint: _endpoint, ...fields } = options;
  const card: ServerCard = {
    $schema: SERVER_CARD_SCHEMA,
    name: derivedName(info.name, new URL(source.endpoint).hostname),
    version: info.version,
    description: clipped(info.description ?? `${info.title ?? info.name}, an MCP server`),
  };
  if (info.title) card.title = clipped(info.title);
  if (info.websiteUrl) card.websiteUrl = info.websiteUrl;
  if (info.icons?.length) card.icons = info.icons;
  card.remotes = [
    {
      type: "streamable-http",
      url: source.endpoint,
      supportedProtocolVersions: [...source.versions],
    },
  ];
  return { ...card, ...fields };
}

/**
 * The AI Catalog identifier of a card (`urn:air:{publisher}:{namespace}:{name}`): the card's
 * reverse-DNS namespace read back as the publisher's domain, so `com.example/weather` is
 * `urn:air:example.com:mcp:weather`, as the text's example has it.
 */
export function catalogIdentifier(cardName: string): string {
  const [namespace = "", name = ""] = cardName.split("/");
  const publisher = IPV4.test(namespace) ? namespace : namespace.split(".").reverse().join(".");
  return `urn:air:${publisher}:mcp:${name}`;
}
