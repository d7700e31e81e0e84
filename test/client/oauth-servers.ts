import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request a test server received, as sent. */
export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  /** The raw body: form-encoded for token requests, JSON for registrations. */
  body: string;
}

/** What a route answers: a status and a JSON body. */
export interface Answer {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
}

/** A server on 127.0.0.1 that answers by path and keeps every request it got. */
export interface TestServer {
  url: string;
  seen: SeenRequest[];
  close(): Promise<void>;
}

type Route = (request: SeenRequest, url: string) => Answer | Promise<Answer>;

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function answer(res: ServerResponse, { status = 200, headers = {}, json }: Answer): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(json === undefined ? "" : JSON.stringify(json));
}

/** Starts a server whose routes (by path; `*` for the rest) answer each request. */
export function startTestServer(routes: Record<string, Route>): Promise<TestServer> {
  const seen: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    const request: SeenRequest = {
      method: req.method ?? "GET",
      path,
      authorization: req.headers.authorization,
      body: await bodyOf(req),
    };
    seen.push(request);
    const route = routes[path] ?? routes["*"];
    answer(res, route ? await route(request, started.url) : { status: 404 });
  });
  const started: TestServer = {
    url: "",
    seen,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      started.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve(started);
    });
  });
}

/** Options of {@link startAuthServer}. */
export interface AuthServerOptions {
  /** Token endpoint authentication methods it lists. @default ["none", "client_secret_basic"] */
  methods?: string[];
  /** Whether it offers Dynamic Client Registration. @default true */
  registration?: boolean;
}

/**
 * An authorization server that grants anything: RFC 8414 metadata, registration, and a token
 * endpoint issuing `at-<port>`. A hostile one plays the same part, and records what it got.
 */
export function startAuthServer(options: AuthServerOptions = {}): Promise<TestServer> {
  const { methods = ["none", "client_secret_basic"], registration = true } = options;
  return startTestServer({
    "/.well-known/oauth-authorization-server": (_request, url) => ({
      json: {
        issuer: url,
        token_endpoint: `${url}/token`,
        ...(registration ? { registration_endpoint: `${url}/register` } : {}),
        token_endpoint_auth_methods_supported: methods,
        token_endpoint_auth_signing_alg_values_supported: ["ES256"],
      },
    }),
    "/register": () => ({
      status: 201,
      json: { client_id: "registered-client", token_endpoint_auth_method: "none" },
    }),
    "/token": (_request, url) => ({
      json: { access_token: `at-${new URL(url).port}`, token_type: "Bearer", expires_in: 3600 },
    }),
  });
}

/**
 * An MCP server (its path `/mcp`) whose resource metadata names `authorizationServer()`, and
 * that answers 200 to any bearer token, 401 otherwise.
 */
export function startProtectedServer(authorizationServer: () => string): Promise<TestServer> {
  return startTestServer({
    "/.well-known/oauth-protected-resource/mcp": (_request, url) => ({
      json: { resource: `${url}/mcp`, authorization_servers: [authorizationServer()] },
    }),
    "/mcp": (request) =>
      request.authorization?.startsWith("Bearer ")
        ? { json: {} }
        : { status: 401, headers: { "www-authenticate": 'Bearer error="invalid_token"' } },
  });
}

/** An unsigned JWT with these claims: enough for a client that only reads them. */
export function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "ES256", typ: "JWT" })}.${part(claims)}.c2lnbmF0dXJl`;
}

/** True when a request carried `secret` anywhere (header or body, encoded or not). */
export function carried(requests: SeenRequest[], secret: string): boolean {
  return requests.some((request) =>
    [request.body, decodeURIComponent(request.body), basicDecoded(request.authorization)].some(
      (text) => text.includes(secret),
    ),
  );
}

function basicDecoded(header: string | undefined): string {
  return header?.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString() : "";
}
