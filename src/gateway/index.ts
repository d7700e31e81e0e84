export { proxyServer } from "./proxy-server.js";
export type {
  ProxyServerOptions,
  Upstream,
  UpstreamKey,
  UpstreamLease,
  UpstreamScope,
} from "./types.js";
export {
  clientUpstream,
  type HttpUpstreamOptions,
  httpUpstream,
  isRetryable,
  type RestartOptions,
  retryableError,
  type SdkServer,
  type SdkTransport,
  type SdkUpstreamOptions,
  type StdioUpstreamOptions,
  type SupervisionOptions,
  sdkUpstream,
  stdioUpstream,
  type UpstreamRestart,
} from "./upstream/index.js";
