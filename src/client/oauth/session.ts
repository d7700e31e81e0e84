import type { DPoPHandle } from "oauth4webapi";
import { checkBindings, checkIssuer } from "./binding.js";
import { type BearerChallenge, bearerChallengeOf, unionScopes } from "./challenge.js";
import { type Discovery, discover, type ServerMetadata, serverMetadata } from "./discovery.js";
import {
  authorizationCodeGrant,
  clientCredentialsGrant,
  jwtBearerGrant,
  refreshGrant,
} from "./grants.js";
import { type IdentityContext, identityFor } from "./identity.js";
import { isLoopbackHost, loadOAuth4WebApi, type OAuth4WebApi } from "./load.js";
import { memoryOAuthStore } from "./memory-store.js";
import { OAuthError, type OAuthOptions, type OAuthStore, type StoredTokens } from "./types.js";

const stores = new WeakMap<OAuthOptions, OAuthStore>();

/** oauth4webapi's DPoP handle, with the two methods its resource requests use. */
type DPoPProofs = DPoPHandle & {
  addProof(url: URL, headers: Headers, htm: string, accessToken?: string): Promise<void>;
  cacheNonce(response: Response, url: URL): void;
};

/** The memory store of one options object, shared by the clients given it. */
function sharedMemoryStore(options: OAuthOptions): OAuthStore {
  const store = stores.get(options) ?? memoryOAuthStore();
  stores.set(options, store);
  return store;
}

/** The key under which the tokens for the MCP server at `url` are kept. */
export function tokensKey(url: URL | string): string {
  return `tokens ${new URL(url).href}`;
}

/**
 * Signs a client in to one protected MCP server and keeps it signed in, as a fetch wrapper:
 * requests to the server's origin carry its access token (never to any other origin); a 401
 * runs discovery and a refresh or a new authorization, a 403 `insufficient_scope` a step-up
 * with the union of the scopes (a few times at most); tokens are refreshed before they expire.
 */
export class OAuthSession {
  readonly #serverUrl: URL;
  readonly #options: OAuthOptions;
  readonly #store: OAuthStore;
  readonly #inner: typeof fetch;
  #tokens: StoredTokens | undefined | null = null;
  #discovery: Discovery | undefined;
  #pending: Promise<StoredTokens | undefined> | undefined;
  /** This session's DPoP key, once a server binds tokens to one (never stored). */
  #dpop: DPoPProofs | undefined;

  constructor(serverUrl: string | URL, options: OAuthOptions, inner?: typeof fetch) {
    this.#serverUrl = new URL(serverUrl);
    checkBindings(options);
    this.#options = options;
    this.#store = options.store ?? sharedMemoryStore(options);
    this.#inner = inner ?? ((input, init) => globalThis.fetch(input, init));
  }

  /** The fetch to give the transport. */
  readonly fetch: typeof fetch = (input, init) => this.#fetch(input, init);

  async #fetch(input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> {
    if (input instanceof Request) return this.#inner(input, init);
    const url = new URL(input);
    if (url.origin !== this.#serverUrl.origin) return this.#inner(url, init);
    let refreshed = false;
    let signedIn = false;
    let nonceRetried = false;
    let stepUps = 0;
    for (;;) {
      const tokens = await this.#current();
      const response = await this.#send(url, init, tokens);
      if (response.status !== 401 && response.status !== 403) return response;
      const challenge = bearerChallengeOf(response);
      // A DPoP server asking for its nonce: the proof is made again with it (RFC 9449 §9).
      if (challenge?.error === "use_dpop_nonce" && tokens?.tokenType === "DPoP" && !nonceRetried) {
        nonceRetried = true;
        await response.body?.cancel();
        continue;
      }
      // Another request renewed the token meanwhile: go again with it rather than refresh or
      // sign in twice (a rotated refresh token used twice may revoke the grant, RFC 9700 §4.14.2).
      if (
        response.status === 401 &&
        this.#tokens &&
        this.#tokens.accessToken !== tokens?.accessToken
      ) {
        await response.body?.cancel();
        continue;
      }
      const stepUp = response.status === 403 && challenge?.error === "insufficient_scope";
      if (
        response.status === 401 ? signedIn : !stepUp || stepUps >= (this.#options.maxStepUps ?? 2)
      ) {
        return response;
      }
      await response.body?.cancel();
      if (stepUp) {
        stepUps++;
        await this.#exclusive(() =>
          this.#signIn(challenge, unionScopes(tokens?.scope, challenge.scope)),
        );
      } else if (!refreshed && tokens?.refreshToken) {
        refreshed = true;
        await this.#exclusive(() => this.#recover(challenge, tokens));
      } else {
        signedIn = true;
        await this.#exclusive(() => this.#signIn(challenge, challenge?.scope));
      }
    }
  }

  /**
   * Sends with the token (and a fresh DPoP proof for a DPoP-bound one), following only
   * same-origin 307/308 redirects with it.
   */
  async #send(url: URL, init: RequestInit, tokens: StoredTokens | undefined): Promise<Response> {
    const dpop = tokens?.tokenType === "DPoP" ? this.#dpop : undefined;
    // A DPoP-bound token without its key (another process's) is no use: sign in again.
    if (!tokens || (tokens.tokenType === "DPoP" && !dpop)) return this.#inner(url, init);
    this.#checkTransport();
    let target = url;
    for (let hops = 0; ; hops++) {
      const headers = new Headers(init.headers);
      if (dpop) {
        await dpop.addProof(
          target,
          headers,
          (init.method ?? "GET").toUpperCase(),
          tokens.accessToken,
        );
      }
      headers.set("authorization", `${dpop ? "DPoP" : "Bearer"} ${tokens.accessToken}`);
      const response = await this.#inner(target, { ...init, headers, redirect: "manual" });
      dpop?.cacheNonce(response, target);
      const location = response.headers.get("location");
      if ((response.status !== 307 && response.status !== 308) || !location || hops >= 5) {
        return response;
      }
      const next = new URL(location, target);
      if (next.origin !== this.#serverUrl.origin) return response;
      await response.body?.cancel();
      target = next;
    }
  }

  /** One sign-in or refresh at a time; concurrent requests wait for it. */
  #exclusive(work: () => Promise<StoredTokens | undefined>): Promise<StoredTokens | undefined> {
    this.#pending ??= work().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #load(): Promise<StoredTokens | undefined> {
    if (this.#tokens === null) {
      const kept = await this.#store.get(tokensKey(this.#serverUrl));
      this.#tokens = kept ? (JSON.parse(kept) as StoredTokens) : undefined;
    }
    return this.#tokens;
  }

  async #save(tokens: StoredTokens): Promise<StoredTokens> {
    this.#tokens = tokens;
    await this.#store.set(tokensKey(this.#serverUrl), JSON.stringify(tokens));
    return tokens;
  }

  /** The token to send: refreshed first when it is about to expire. */
  async #current(): Promise<StoredTokens | undefined> {
    if (this.#pending) await this.#pending.catch(() => {});
    const tokens = await this.#load();
    if (tokens?.expiresAt === undefined) return tokens;
    const margin = (this.#options.refreshBeforeExpirySec ?? 60) * 1000;
    if (tokens.expiresAt - margin > Date.now()) return tokens;
    return this.#exclusive(() => this.#renew(tokens)).catch(() => undefined);
  }

  async #context(server: ServerMetadata): Promise<IdentityContext> {
    const oauth = await loadOAuth4WebApi();
    const allowed = this.#options.allowInsecureRequests;
    const dpop = await this.#dpopFor(oauth, server);
    return {
      ...(dpop ? { dpop } : {}),
      oauth,
      options: this.#options,
      store: this.#store,
      fetch: this.#inner,
      http: (url) => ({
        [oauth.customFetch]: this.#inner,
        [oauth.allowInsecureRequests]: allowed ?? isLoopbackHost(new URL(url).hostname),
      }),
    };
  }

  /** A DPoP key for servers that bind tokens to one (ES256 listed), made once per session. */
  async #dpopFor(oauth: OAuth4WebApi, server: ServerMetadata): Promise<DPoPProofs | undefined> {
    const algorithms = server.dpop_signing_alg_values_supported;
    if (!Array.isArray(algorithms) || !algorithms.includes("ES256")) return undefined;
    this.#dpop ??= oauth.DPoP({}, await oauth.generateKeyPair("ES256")) as DPoPProofs;
    return this.#dpop;
  }

  async #metadataOf(issuer: string): Promise<ServerMetadata> {
    const known = this.#discovery?.server;
    return known?.issuer === issuer ? known : serverMetadata(issuer, this.#inner);
  }

  /** A refresh, or a new client-credentials token; undefined when the user must sign in. */
  async #renew(tokens: StoredTokens): Promise<StoredTokens | undefined> {
    const server = await this.#metadataOf(tokens.issuer);
    const context = await this.#context(server);
    const identity = await identityFor(context, server);
    if (tokens.refreshToken) {
      return this.#save(
        await refreshGrant(context, identity, server, {
          ...tokens,
          refreshToken: tokens.refreshToken,
        }),
      );
    }
    const grant = this.#machineGrant();
    if (!grant) return undefined;
    const discovery = { resource: tokens.resource, scopesSupported: undefined, server };
    return this.#save(await grant(context, identity, discovery, tokens.scope));
  }

  /** The grant of a client acting on its own (no user), if it is one. */
  #machineGrant() {
    const { grant } = this.#options;
    if (grant === "client_credentials") return clientCredentialsGrant;
    return grant === "jwt_bearer" || grant === "enterprise_managed" ? jwtBearerGrant : undefined;
  }

  /** After a 401 with a token: refresh at the same issuer, else sign in again. */
  async #recover(
    challenge: BearerChallenge | undefined,
    sent: StoredTokens,
  ): Promise<StoredTokens | undefined> {
    this.#discovery = await discover(this.#serverUrl, challenge, this.#inner);
    if (sent.refreshToken && sent.issuer === this.#discovery.server.issuer) {
      const renewed = await this.#renew(sent).catch(() => undefined);
      if (renewed) return renewed;
    }
    return this.#signIn(challenge, challenge?.scope);
  }

  /**
   * Discovery, a client identity, then a grant. Scopes: those asked for, else the resource's
   * `scopes_supported`, else none; plus `offline_access` when the server lists it (refresh).
   */
  /** A token over plain HTTP travels in the clear: only to loopback hosts, or when allowed. */
  #checkTransport(): void {
    const url = this.#serverUrl;
    if (url.protocol !== "http:" || isLoopbackHost(url.hostname)) return;
    if (this.#options.allowInsecureRequests) return;
    throw new OAuthError(
      `${url.origin} is plain HTTP: a token sent there travels in the clear (use HTTPS, or allowInsecureRequests)`,
    );
  }

  async #signIn(
    challenge: BearerChallenge | undefined,
    scope: string | undefined,
  ): Promise<StoredTokens> {
    this.#checkTransport();
    const machine = this.#machineGrant();
    if (!machine && (!this.#options.redirect || !this.#options.redirectUri)) {
      throw new OAuthError(
        `${this.#serverUrl.href} needs signing in, and no \`redirect\` and \`redirectUri\` were given`,
      );
    }
    const discovery = await discover(this.#serverUrl, challenge, this.#inner);
    this.#discovery = discovery;
    // Refused before any request to it, a registration included.
    checkIssuer(this.#options, discovery.server);
    const context = await this.#context(discovery.server);
    const identity = await identityFor(context, discovery.server);
    let wanted = scope ?? discovery.scopesSupported?.join(" ");
    if (machine)
      return this.#save(await machine(context, identity, discovery, wanted || undefined));
    const offered = discovery.server.scopes_supported;
    if (Array.isArray(offered) && offered.includes("offline_access")) {
      wanted = unionScopes(wanted, "offline_access");
    }
    return this.#save(
      await authorizationCodeGrant(context, identity, discovery, wanted || undefined),
    );
  }

  /** Forgets the tokens kept for this server (the registration stays). */
  async signOut(): Promise<void> {
    this.#tokens = undefined;
    await this.#store.delete(tokensKey(this.#serverUrl));
  }
}
