import type { McpStore } from "../../store/types.js";
import type { EndpointServices } from "../endpoint-services.js";
import { SessionfulLegacy } from "./sessionful.js";
import { StatelessLegacy } from "./stateless.js";
import type { LegacyEra, LegacyOptions, LegacySettings } from "./types.js";

/** The legacy era for `options`: sessions in `store`, or none when `stateless`. */
export function createLegacyEra(
  core: EndpointServices,
  store: McpStore,
  options: LegacyOptions,
): LegacyEra {
  const settings: LegacySettings = {
    maxSessions: options.maxSessions ?? 50_000,
    maxSessionsPerClient: options.maxSessionsPerClient ?? 1_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 300_000,
    retryMs: options.retryMs ?? 1_000,
    sweepIntervalMs: options.sweepIntervalMs ?? 60_000,
    resumeWindowMs: options.resumeWindowMs ?? 120_000,
    resumeCheckMs: options.resumeCheckMs ?? 10_000,
  };
  return options.stateless
    ? new StatelessLegacy(core, settings.retryMs)
    : new SessionfulLegacy(core, store, settings);
}
