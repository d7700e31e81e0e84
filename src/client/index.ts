export {
  APP_MIME_TYPE,
  APPS_EXTENSION,
  type AppToolLink,
  type AppToolVisibility,
} from "../protocol/apps.js";
export type { TelemetryOptions } from "../telemetry/telemetry.js";
export { type CacheHints, ResultCache } from "./cache.js";
export { McpClient } from "./client.js";
export type { CompletionRef, CompletionValues } from "./completion.js";
export {
  ErrorCode,
  type InputRequest,
  InputRequiredError,
  isMcpError,
  McpError,
  McpHttpError,
  ToolApprovalDeniedError,
} from "./errors.js";
export type {
  DeliveryMode,
  DeliveryStatus,
  EventDescriptor,
  EventOccurrence,
  EventsErrorObject,
  PollEventsResult,
} from "../protocol/events.js";
export type {
  EventStreamOptions,
  EventSubscription,
  PollEventsOptions,
  SubscribeEventsOptions,
  WebhookStatus,
  WebhookSubscribeOptions,
  WebhookSubscription,
  WebhookTarget,
} from "./ext/events/types.js";
export { type LoadedSkill, Skill, SkillVerificationError } from "./ext/skills/index.js";
export type { HeadersOption, HttpOptions } from "./http-wire.js";
export type { Subscription } from "./listen.js";
export { memoryOAuthStore } from "./oauth/memory-store.js";
export {
  type EnterpriseOptions,
  OAuthError,
  type OAuthOptions,
  type OAuthStore,
  type PreRegisteredClient,
  type RedirectHandler,
  type StoredClient,
  type StoredTokens,
  type TokenEndpointAuthMethod,
} from "./oauth/types.js";
export type { Listed, McpClientOptions } from "./options.js";
export {
  type AnthropicTool,
  type OpenAIChatTool,
  type OpenAIResponsesTool,
  toAnthropicTool,
  toAnthropicTools,
  toOpenAITool,
  toOpenAITools,
} from "./render.js";
export type { ServerDescription } from "./session.js";
export { Tool, type ToolError, type ToolPolicy } from "./tool.js";
export type * from "./types.js";
export { MessageWire, type Wire, type WireHandlers, type WireRequestOptions } from "./wire.js";
