export type { CorsOptions } from "./http/guards/cors.js";
export type {
  ServerCard,
  ServerCardHeader,
  ServerCardInput,
  ServerCardOptions,
  ServerCardRemote,
} from "./http/discovery/server-card.js";
export type { RequestInfo } from "./http/endpoint-services.js";
export type { CloseOptions, McpHandler, McpHandlerOptions, McpHealth } from "./http/handler.js";
export { createMcpHandler } from "./http/handler.js";
export type { AllowedOrigins } from "./http/guards/origin.js";
export type { TrustProxy } from "./http/guards/proxy.js";
export type { RateLimitOptions } from "./http/guards/rate-limit.js";
export type { RateLimitCosts, RateLimitedRequest } from "./http/guards/rate-limit-cost.js";
export type { BodyResult, McpHttpRequest, McpHttpResponse } from "./http/types.js";
export type { FetchOptions } from "./http/web.js";
export {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  type AppToolLink,
  type AppToolVisibility,
} from "./protocol/apps.js";
export { ErrorCode, type ErrorCodeValue, isMcpError, McpError } from "./protocol/errors.js";
export {
  type DeliveryMode,
  EVENTS_EXTENSION,
  type EventDescriptor,
  type EventOccurrence,
  EventsErrorCode,
  type EventsErrorName,
  eventsError,
} from "./protocol/events.js";
export {
  SKILLS_EXTENSION,
  type SkillEntry,
  type SkillFileEntry,
} from "./protocol/skills.js";
export {
  LEGACY_VERSIONS,
  type LogLevel,
  MODERN_VERSION,
  MODERN_VERSIONS,
  SUPPORTED_VERSIONS,
} from "./protocol/versions.js";
export {
  type AppCsp,
  type AppResourceMeta,
  type AppResourceOptions,
  appToolMeta,
  registerAppResource,
} from "./server/ext/apps/index.js";
export type {
  EmitOptions,
  EmitResult,
  EventContext,
  EventRegistration,
  EventRetention,
  EventsOptions,
} from "./server/ext/events/index.js";
export {
  registerSkill,
  type SkillFromParts,
  type SkillFromText,
  type SkillLayout,
  type SkillOptions,
} from "./server/ext/skills/index.js";
export type { InferJsonSchema } from "./server/infer-args.js";
export type { ChangeEvent, McpServerOptions, Registration } from "./server/mcp-server.js";
export { McpServer } from "./server/mcp-server.js";
export type { SchemaInput, StandardSchemaV1 } from "./server/schema.js";
export type * from "./server/types.js";
export { type MemoryStoreOptions, memoryStore } from "./store/memory.js";
export type {
  BusMessage,
  EventBus,
  LeaseStore,
  McpStore,
  NonceStore,
  RateLimiter,
  RateLimitPolicy,
  RateLimitVerdict,
} from "./store/types.js";
