// The client the official conformance suite drives in `client` mode: it runs this command with
// the scenario's server URL appended, the scenario in MCP_CONFORMANCE_SCENARIO and, when a
// version is asked for, MCP_CONFORMANCE_PROTOCOL_VERSION. One generic behaviour serves every
// scenario: connect, list the tools, call each with arguments built from its schema, answer
// input requests, close. The auth/* scenarios add sign-in: the suite's authorization server
// approves at once, so `redirect` follows its answer instead of opening a browser.
// test/client/conformance.test.ts records what passes.
import { McpClient, type OAuthOptions, type Tool } from "mcp-mount/client";

type JsonSchema = Record<string, unknown>;

const url = process.argv[2];
if (!url) throw new Error("usage: conformance.ts <server-url>");
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;

/** A value that satisfies a property schema well enough for the suite's tools. */
function sample(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  switch (schema.type) {
    case "integer":
    case "number":
      return 1;
    case "boolean":
      return true;
    case "array":
      return [];
    case "object":
      return argumentsFor(schema);
    default:
      return "test";
  }
}

/** Arguments with every required property filled in. */
function argumentsFor(schema: JsonSchema): Record<string, unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) args[name] = sample(properties[name] ?? {});
  return args;
}

/** Scenario data the suite hands over: exact tool calls, or a pre-registered client. */
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}") as {
  toolCalls?: { name: string; arguments: Record<string, unknown> }[];
  client_id?: string;
  client_secret?: string;
  private_key_pem?: string;
  signing_algorithm?: string;
  issuer?: string;
  valid_jwt?: string;
  idp_client_id?: string;
  idp_id_token?: string;
  idp_issuer?: string;
  idp_token_endpoint?: string;
};
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? "";

/**
 * The authorization server the scenario's MCP server names in its resource metadata: trusted on
 * first use, since the server URL the suite hands over is this client's only trust anchor. The
 * client checks that server's metadata names this very issuer before sending it anything.
 */
async function firstIssuer(): Promise<string> {
  const server = new URL(url!);
  for (const path of [
    `/.well-known/oauth-protected-resource${server.pathname}`,
    "/.well-known/oauth-protected-resource",
  ]) {
    const response = await fetch(new URL(path, server.origin));
    const metadata = (await response.json().catch(() => ({}))) as {
      authorization_servers?: unknown[];
    };
    const issuer = metadata.authorization_servers?.[0];
    if (typeof issuer === "string") return issuer;
  }
  throw new Error(`${url} names no authorization server`);
}

/** The issuer a secret, key or ID-JAG is bound to: the scenario's, else the first one found. */
async function boundIssuer(): Promise<string | undefined> {
  const needed = context.client_secret || context.private_key_pem || context.idp_issuer;
  return context.issuer ?? (needed ? await firstIssuer() : undefined);
}

/** The enterprise identity provider of auth/enterprise-managed-authorization (SEP-990). */
function enterpriseOptions(issuer: string | undefined): Pick<OAuthOptions, "enterprise"> {
  const { idp_issuer, idp_client_id, idp_id_token, idp_token_endpoint } = context;
  if (!idp_issuer || !idp_client_id || !idp_id_token || !issuer) return {};
  return {
    enterprise: {
      idpIssuer: idp_issuer,
      idpClientId: idp_client_id,
      idToken: idp_id_token,
      ...(idp_token_endpoint ? { idpTokenEndpoint: idp_token_endpoint } : {}),
      issuer,
    },
  };
}

/** The grant a scenario's context and name call for. */
function grantOf(): OAuthOptions["grant"] {
  if (context.idp_issuer) return "enterprise_managed";
  if (scenario === "auth/wif-jwt-bearer") return "jwt_bearer";
  return scenario.startsWith("auth/client-credentials")
    ? "client_credentials"
    : "authorization_code";
}

/** Sign-in for the auth/* scenarios, headless: the redirect is read off the 302. */
async function authOptions(): Promise<OAuthOptions | undefined> {
  if (!scenario.startsWith("auth/")) return undefined;
  const issuer = await boundIssuer();
  return {
    grant: grantOf(),
    ...enterpriseOptions(issuer),
    // The workload identity token the suite minted for its authorization server.
    ...(context.valid_jwt ? { assertion: context.valid_jwt } : {}),
    redirectUri: "http://localhost:3000/callback",
    redirect: async (authorizationUrl) => {
      const response = await fetch(authorizationUrl, { redirect: "manual" });
      const location = response.headers.get("location");
      if (!location) throw new Error(`the authorization server answered ${response.status}`);
      return location;
    },
    // The suite's Client ID Metadata Document URL (auth/basic-cimd expects this one).
    clientMetadataUrl: "https://conformance-test.local/client-metadata.json",
    clientName: "mcp-mount-conformance-client",
    ...(context.client_id
      ? {
          client: {
            clientId: context.client_id,
            ...(context.client_secret ? { clientSecret: context.client_secret } : {}),
            ...(context.private_key_pem ? { privateKey: context.private_key_pem } : {}),
            ...(context.signing_algorithm ? { signingAlgorithm: context.signing_algorithm } : {}),
            ...(issuer ? { issuer } : {}),
          },
        }
      : {}),
  };
}

const auth = await authOptions();
const client = await McpClient.connect(url, {
  ...(auth ? { auth } : {}),
  clientInfo: { name: "mcp-mount-conformance-client", version: "0.1.0" },
  // Derive the lifecycle from the version asked for; detect it when none is.
  era: version === undefined ? "auto" : version >= "2026-07-28" ? "modern" : "legacy",
  eraCache: false,
  onInput: {
    elicitation: () => ({ action: "accept", content: {} }),
    sampling: () => ({
      role: "assistant",
      content: { type: "text", text: "conformance" },
      model: "conformance-model",
      stopReason: "endTurn",
    }),
    roots: () => [{ uri: "file:///conformance", name: "conformance" }],
  },
  onWarning: (message) => console.error(`warning: ${message}`),
});
try {
  const tools: Tool[] = await client.tools();
  if (context.toolCalls) {
    // Exact arguments, nulls included: callTool sends them unchecked, headers mirrored.
    for (const call of context.toolCalls) {
      const result = await client.callTool(call.name, call.arguments);
      console.log(`${call.name}: ${JSON.stringify(result.content).slice(0, 300)}`);
    }
  } else if (scenario === "json-schema-2020-12-preservation") {
    // Round-trips the focal tool's schema through the echo tool, as the scenario asks.
    const focal = tools.find((tool) => tool.name !== "json_schema_echo");
    await client.callTool("json_schema_echo", { schema: focal?.inputSchema ?? {} });
  } else
    for (const tool of tools) {
      const result = await tool.call(argumentsFor(tool.inputSchema)).catch((error: unknown) => ({
        thrown: String(error),
      }));
      console.log(`${tool.name}: ${JSON.stringify(result).slice(0, 300)}`);
    }
} finally {
  await client.close();
}
