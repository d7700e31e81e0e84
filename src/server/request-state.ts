import type { JsonObject } from "../protocol/messages.js";
import { isObject } from "../protocol/messages.js";
import { MAX_PARAMS_DEPTH, paramsDepthError } from "../protocol/params.js";
import { fromBase64, fromUtf8, toBase64Url, utf8 } from "../utils/base64.js";
import { canonicalJson } from "../utils/canonical-json.js";

/** What a sealed `requestState` carries between MRTR rounds (PROTOCOL §2.4). */
export interface StatePayload {
  /** Principal (issuer + subject) the state belongs to; empty when unauthenticated. */
  principal: string;
  method: string;
  /** Digest of the request's salient params. */
  digest: string;
  /** Expiry, epoch milliseconds. */
  expires: number;
  /** Single-use id, claimed in the store on redemption. */
  nonce?: string;
  /** The round that sealed it (1 for the first). */
  round?: number;
  /** That round's span (`traceparent`), which the next round's span links to. */
  trace?: string;
  /** Input responses gathered in earlier rounds. */
  responses: JsonObject;
  /** The handler's own `ctx.state`. */
  state: JsonObject;
}

/** Seals and opens request state with AES-256-GCM. */
export interface StateSealer {
  seal(payload: StatePayload): Promise<string>;
  /** The payload, or undefined when the token is malformed, tampered with or from another key. */
  open(token: string): Promise<StatePayload | undefined>;
}

const VERSION = "s1";
const IV_BYTES = 12;

async function importKey(secret: string | Uint8Array | undefined): Promise<CryptoKey> {
  const material =
    secret === undefined
      ? crypto.getRandomValues(new Uint8Array(32))
      : new Uint8Array(
          await crypto.subtle.digest(
            "SHA-256",
            typeof secret === "string" ? utf8(secret) : new Uint8Array(secret),
          ),
        );
  return crypto.subtle.importKey("raw", material, "AES-GCM", false, ["encrypt", "decrypt"]);
}

/**
 * On globalThis, so the warning is printed once per process even where a bundler gives each
 * route its own copy of this module.
 */
const WARNED = Symbol.for("mcp-mount.warned-about-random-key");

/**
 * Said when the first state is sealed, not when the handler is built: a server that never asks
 * for input needs no secret, and building an app (Next.js evaluates every route) serves nothing.
 */
function warnAboutRandomKey(): void {
  const global = globalThis as { [WARNED]?: boolean };
  if (global[WARNED]) return;
  global[WARNED] = true;
  console.warn(
    "mcp-mount: no `secret` given; requestState is sealed with a random per-process key, so multi round-trip retries only work on this process.",
  );
}

/** Creates a sealer; without a secret the key is random and valid only in this process. */
export function createStateSealer(secret?: string | Uint8Array): StateSealer {
  const key = importKey(secret);
  let warn = secret === undefined;
  return {
    async seal(payload) {
      if (warn) {
        warn = false;
        warnAboutRandomKey();
      }
      const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const plain = utf8(JSON.stringify(payload));
      const sealed = new Uint8Array(
        await crypto.subtle.encrypt(
          { name: "AES-GCM", iv, additionalData: utf8(VERSION) },
          await key,
          plain,
        ),
      );
      const out = new Uint8Array(IV_BYTES + sealed.length);
      out.set(iv);
      out.set(sealed, IV_BYTES);
      return `${VERSION}.${toBase64Url(out)}`;
    },
    async open(token) {
      if (!token.startsWith(`${VERSION}.`)) return undefined;
      try {
        const bytes = fromBase64(token.slice(VERSION.length + 1));
        if (bytes.length <= IV_BYTES) return undefined;
        const plain = await crypto.subtle.decrypt(
          { name: "AES-GCM", iv: bytes.subarray(0, IV_BYTES), additionalData: utf8(VERSION) },
          await key,
          bytes.subarray(IV_BYTES),
        );
        const payload: unknown = JSON.parse(fromUtf8(new Uint8Array(plain)));
        return isObject(payload) ? (payload as unknown as StatePayload) : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/**
 * SHA-256 of the params that identify a request, without the MRTR and `_meta` fields.
 * InvalidParams when they nest deeper than {@link MAX_PARAMS_DEPTH}.
 */
export async function digestParams(params: JsonObject | undefined): Promise<string> {
  const { _meta, inputResponses, requestState, ...salient } = params ?? {};
  // canonicalJson recurses: what nests too deeply for it is the client's error, not ours.
  const tooDeep = paramsDepthError(salient);
  if (tooDeep) throw tooDeep;
  const canonical = canonicalJson(salient, MAX_PARAMS_DEPTH);
  const hash = await crypto.subtle.digest("SHA-256", utf8(canonical));
  return toBase64Url(new Uint8Array(hash));
}
