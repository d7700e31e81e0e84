export { clientUpstream } from "./client-upstream.js";
export type { RestartOptions, UpstreamRestart } from "./connection.js";
export { type HttpUpstreamOptions, httpUpstream } from "./http-upstream.js";
export type { SdkServer, SdkTransport } from "./in-process-wire.js";
export { isRetryable, retryableError } from "./retryable.js";
export { type SdkUpstreamOptions, sdkUpstream } from "./sdk-upstream.js";
export { type StdioUpstreamOptions, stdioUpstream } from "./stdio-upstream.js";
export type { SupervisionOptions } from "./supervised.js";
