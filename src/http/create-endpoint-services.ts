import { principalKey } from "../server/access.js";
import { publishChange } from "../server/channels.js";
import { createExtensions } from "../server/ext/index.js";
import { ListenHub } from "../server/listen-hub.js";
import type { McpServer } from "../server/mcp-server.js";
import { createStateSealer } from "../server/request-state.js";
import type { McpStore } from "../store/types.js";
import { createTelemetry } from "../telemetry/telemetry.js";
import { type EndpointServices, type RequestInfo, toRequestInfo } from "./endpoint-services.js";
import { addressKeyer, checkIpv6Subnet } from "./guards/ip-address.js";
import { clientAddressOf } from "./guards/proxy.js";
import { createProxyWarning } from "./guards/proxy-warning.js";
import { RateLimit } from "./guards/rate-limit.js";
import type { McpHandlerOptions } from "./handler-options.js";
import { InFlight } from "./streams/in-flight.js";
import { StreamSlots } from "./streams/stream-slots.js";

/** Calls the app's `onError`, which must never change a response by failing itself. */
function errorReporter<App>(options: McpHandlerOptions<App>): EndpointServices["reportError"] {
  return (error, method, app) => {
    try {
      const context: { method?: string; app?: App } = {};
      if (method !== undefined) context.method = method;
      if (app !== undefined) context.app = app as App;
      options.onError?.(error, context);
    } catch {
      // A failing hook must not change the response.
    }
  };
}

/** The once-per-handler warning about an untrusted proxy, given the caps keyed by address. */
function proxyNotice<App>(
  hops: number,
  options: McpHandlerOptions<App>,
  warn: (message: string) => void,
) {
  const legacy =
    options.legacy === false ? undefined : options.legacy === true ? {} : (options.legacy ?? {});
  const limits = {
    rateLimit: options.rateLimit !== undefined,
    maxStreamsPerClient: options.maxStreamsPerClient ?? 100,
    maxSessionsPerClient: legacy ? (legacy.maxSessionsPerClient ?? 1_000) : undefined,
  };
  return createProxyWarning(hops, limits, warn);
}

/**
 * The parts of one handler that both eras share: dispatch's runtime with the extensions, the
 * listen hub, stream slots, requests in flight, and the app's hooks, defaults applied.
 */
export function createEndpointServices<App>(
  server: McpServer<App>,
  store: McpStore,
  hops: number,
  options: McpHandlerOptions<App>,
): EndpointServices {
  const reportError = errorReporter(options);
  const keyOfAddress = addressKeyer(checkIpv6Subnet(options.ipv6Subnet ?? 64), "a:");
  const telemetry = createTelemetry(options.telemetry);
  const warn = (message: string) => {
    if (options.onError) reportError(new Error(message));
    else console.warn(message);
  };
  const noticeProxy = proxyNotice(hops, options, warn);
  const extensions = createExtensions(
    {
      server,
      store,
      telemetry,
      publish: (event) => {
        publishChange(store.bus, event).catch((error: unknown) => reportError(error));
      },
      onError: (error) => reportError(error),
    },
    options,
  );
  return {
    server,
    dispatchServices: {
      sealer: createStateSealer(options.secret),
      nonces: store.nonces,
      stateTtlMs: options.stateTtlMs ?? 300_000,
      singleUseState: options.singleUseState ?? false,
      extensions,
      telemetry,
    },
    inflight: new InFlight(),
    hub: new ListenHub(server, {
      bus: store.bus,
      keepAliveMs: options.keepAliveMs ?? 15_000,
      onError: (error) => reportError(error),
    }),
    slots: new StreamSlots({
      max: options.maxStreams ?? 10_000,
      maxPerClient: options.maxStreamsPerClient ?? 100,
    }),
    ...(options.rateLimit && {
      rateLimit: new RateLimit(options.rateLimit, server, store, (error) => reportError(error)),
    }),
    clientOf: (req, caller) => {
      if (caller?.subject !== undefined) return `p:${principalKey(caller)}`;
      if (caller?.clientId !== undefined) return `c:${caller.issuer ?? ""}|${caller.clientId}`;
      const address = clientAddressOf(req, hops);
      if (address === undefined) return undefined;
      noticeProxy(req);
      return keyOfAddress(address);
    },
    hideUnauthorized: options.auth?.hideUnauthorized ?? false,
    reportError,
    warn,
    ...(options.onRequest && {
      observe: (event: Parameters<NonNullable<EndpointServices["observe"]>>[0]) => {
        try {
          options.onRequest?.(toRequestInfo(event) as RequestInfo<App>);
        } catch (error) {
          reportError(error);
        }
      },
    }),
  };
}
