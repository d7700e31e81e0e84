import type { ClientAuth, DPoPHandle } from "oauth4webapi";
import { isObject, type JsonObject } from "../../protocol/messages.js";
import { usableAt } from "./binding.js";
import type { ServerMetadata } from "./discovery.js";
import { isLoopbackHost, type OAuth4WebApi, toOAuthError } from "./load.js";
import {
  OAuthError,
  type OAuthOptions,
  type OAuthStore,
  type PreRegisteredClient,
  type StoredClient,
  type TokenEndpointAuthMethod,
} from "./types.js";

/** A client identity ready for the token endpoint. */
export interface ClientIdentity {
  client: { client_id: string };
  auth: ClientAuth;
}

/** What identity selection needs. */
export interface IdentityContext {
  oauth: OAuth4WebApi;
  options: OAuthOptions;
  store: OAuthStore;
  /** The fetch for requests to authorization servers. */
  fetch: typeof fetch;
  /** The DPoP handle when the authorization server binds tokens to a key (RFC 9449). */
  dpop?: DPoPHandle;
  /** oauth4webapi's request options: the fetch and whether plain HTTP is allowed. */
  http: (url: string) => Record<symbol, unknown>;
}

const ALGORITHMS: Record<string, RsaHashedImportParams | EcKeyImportParams | Algorithm> = {
  ES256: { name: "ECDSA", namedCurve: "P-256" },
  ES384: { name: "ECDSA", namedCurve: "P-384" },
  RS256: { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
  PS256: { name: "RSA-PSS", hash: "SHA-256" },
  EdDSA: { name: "Ed25519" },
};

/** Imports a PKCS #8 PEM key for `private_key_jwt` with Web Crypto. */
async function importPrivateKey(pem: string, algorithm: string): Promise<CryptoKey> {
  const params = ALGORITHMS[algorithm];
  if (!params) throw new OAuthError(`Unsupported signing algorithm ${algorithm}`);
  const base64 = pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  return crypto.subtle.importKey("pkcs8", der, params, false, ["sign"]);
}

async function clientAuthOf(
  oauth: OAuth4WebApi,
  method: TokenEndpointAuthMethod,
  secret: string | undefined,
  preRegistered: PreRegisteredClient | undefined,
): Promise<ClientAuth> {
  if (method === "private_key_jwt") {
    const key = preRegistered?.privateKey;
    if (!key) throw new OAuthError("private_key_jwt needs the client's privateKey");
    const alg = preRegistered.signingAlgorithm ?? "ES256";
    return oauth.PrivateKeyJwt(typeof key === "string" ? await importPrivateKey(key, alg) : key);
  }
  if (method === "none") return oauth.None();
  if (!secret) throw new OAuthError(`${method} needs the client's secret`);
  return method === "client_secret_post" ? oauth.ClientSecretPost(secret) : secretBasic(secret);
}

/** A client secret presented the way `server` takes it (Basic unless it lists only post). */
export function secretAuth(oauth: OAuth4WebApi, server: JsonObject, secret: string): ClientAuth {
  return secretMethod(server) === "client_secret_post"
    ? oauth.ClientSecretPost(secret)
    : secretBasic(secret);
}

/**
 * `client_secret_basic` with the id and secret form-encoded as RFC 6749 §2.3.1 says, the way
 * servers in the field decode them (oauth4webapi also escapes "-", which many do not undo).
 */
function secretBasic(secret: string): ClientAuth {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return (_server, client, _body, headers) => {
    headers.set("authorization", `Basic ${btoa(`${encode(client.client_id)}:${encode(secret)}`)}`);
  };
}

function supportedMethods(server: JsonObject): string[] {
  const listed = server.token_endpoint_auth_methods_supported;
  // RFC 8414 §2: absent means client_secret_basic.
  return Array.isArray(listed) ? listed.map(String) : ["client_secret_basic"];
}

function secretMethod(server: JsonObject): TokenEndpointAuthMethod {
  const supported = supportedMethods(server);
  return !supported.includes("client_secret_basic") && supported.includes("client_secret_post")
    ? "client_secret_post"
    : "client_secret_basic";
}

function preRegisteredMethod(client: PreRegisteredClient, server: ServerMetadata) {
  if (client.tokenEndpointAuthMethod) return client.tokenEndpointAuthMethod;
  if (client.privateKey) return "private_key_jwt";
  return client.clientSecret ? secretMethod(server) : "none";
}

/**
 * POSTs RFC 7591 client metadata. Read leniently (200 or 201; `client_secret_expires_at` may
 * be missing), as many servers in the field answer.
 */
async function postRegistration(
  context: IdentityContext,
  endpoint: string,
  metadata: JsonObject,
): Promise<JsonObject & { client_id: string }> {
  const url = new URL(endpoint);
  const { oauth } = context;
  oauth.checkProtocol(url, context.http(endpoint)[oauth.allowInsecureRequests] !== true);
  const response = await context.fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(metadata),
  });
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok || !isObject(body) || typeof body.client_id !== "string") {
    const error = isObject(body) ? body : {};
    throw toOAuthError(
      typeof error.error === "string" ? error : { message: `HTTP ${response.status}` },
      "Client registration",
    );
  }
  return body as JsonObject & { client_id: string };
}

/** The grant types to register for (RFC 7591 §2): the one grant the options use. */
function registeredGrants(options: OAuthOptions): string[] {
  switch (options.grant) {
    case "client_credentials":
      return ["client_credentials"];
    case "jwt_bearer":
    case "enterprise_managed":
      return ["urn:ietf:params:oauth:grant-type:jwt-bearer"];
    default:
      return ["authorization_code", "refresh_token"];
  }
}

/** RFC 7591 registration, asking for the method the server lists first of ours. */
async function register(context: IdentityContext, server: ServerMetadata): Promise<StoredClient> {
  const { options } = context;
  const supported = supportedMethods(server);
  const asked = supported.includes("none") ? "none" : secretMethod(server);
  const grantTypes = registeredGrants(options);
  const redirectUri = options.redirectUri;
  const loopback = redirectUri ? isLoopbackHost(new URL(redirectUri).hostname) : true;
  const metadata = {
    client_name: options.clientName ?? "mcp-mount client",
    grant_types: grantTypes,
    response_types: grantTypes.includes("authorization_code") ? ["code"] : [],
    token_endpoint_auth_method: asked,
    // MCP: native for loopback redirects (CLIs, desktop apps), web otherwise.
    application_type: loopback ? "native" : "web",
    ...(redirectUri ? { redirect_uris: [redirectUri] } : {}),
  };
  try {
    const registered = await postRegistration(
      context,
      String(server.registration_endpoint),
      metadata,
    );
    const secret =
      typeof registered.client_secret === "string" ? registered.client_secret : undefined;
    const method =
      (registered.token_endpoint_auth_method as TokenEndpointAuthMethod | undefined) ??
      (secret ? (asked === "none" ? secretMethod(server) : asked) : "none");
    return {
      clientId: registered.client_id,
      ...(secret ? { clientSecret: secret } : {}),
      tokenEndpointAuthMethod: method,
      ...(redirectUri ? { redirectUri } : {}),
    };
  } catch (error) {
    throw toOAuthError(error, "Client registration");
  }
}

/**
 * True when a registration made for redirect URI `registered` serves `wanted`: the same URI,
 * or a loopback one on another port (RFC 8252 §7.3), or no redirect needed now (a refresh).
 */
function sameRedirect(registered: string | undefined, wanted: string | undefined): boolean {
  if (wanted === undefined || registered === wanted) return true;
  if (registered === undefined) return false;
  const [a, b] = [new URL(registered), new URL(wanted)];
  if (!isLoopbackHost(a.hostname)) return false;
  a.port = b.port;
  return a.href === b.href;
}

/**
 * The client to use at `server`, in the order MCP gives: pre-registered (when it may be shown
 * to this issuer), a registration kept from before (same redirect URI), a Client ID Metadata
 * Document URL where supported, else Dynamic Client Registration. Registrations are kept per
 * issuer: an identity is never shown to another authorization server.
 */
export async function identityFor(
  context: IdentityContext,
  server: ServerMetadata,
): Promise<ClientIdentity> {
  const { oauth, options, store } = context;
  const given = options.client;
  if (given && usableAt(given, server.issuer)) {
    const method = preRegisteredMethod(given, server);
    return {
      client: { client_id: given.clientId },
      auth: await clientAuthOf(oauth, method, given.clientSecret, given),
    };
  }
  const key = `client ${server.issuer}`;
  const kept = await store.get(key);
  let client = kept ? (JSON.parse(kept) as StoredClient) : undefined;
  if (client && !sameRedirect(client.redirectUri, options.redirectUri)) client = undefined;
  if (
    !client &&
    options.clientMetadataUrl &&
    server.client_id_metadata_document_supported === true
  ) {
    client = { clientId: options.clientMetadataUrl, tokenEndpointAuthMethod: "none" };
  } else if (!client) {
    if (typeof server.registration_endpoint !== "string") {
      throw new OAuthError(
        `The authorization server ${server.issuer} offers no client registration: give a pre-registered client`,
      );
    }
    client = await register(context, server);
    await store.set(key, JSON.stringify(client));
  }
  return {
    client: { client_id: client.clientId },
    auth: await clientAuthOf(oauth, client.tokenEndpointAuthMethod, client.clientSecret, given),
  };
}
