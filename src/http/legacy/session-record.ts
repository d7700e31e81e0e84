import type { JsonObject } from "../../protocol/messages.js";
import { isObject } from "../../protocol/messages.js";
import type { LogLevel } from "../../protocol/versions.js";
import type { Implementation } from "../../server/types.js";
import type { SessionRecord } from "../../store/types.js";
import type { LegacyPeer } from "./run.js";
import { newSessionId } from "./stream-ids.js";

/** The record of a session an `initialize` opens, under a new id. */
export function newSessionRecord(
  params: JsonObject,
  protocolVersion: string,
  principal: string,
  client: string | undefined,
): SessionRecord {
  const record: SessionRecord = {
    id: newSessionId(),
    protocolVersion,
    capabilities: isObject(params.capabilities) ? params.capabilities : {},
    subscriptions: [],
    principal,
    createdAt: Date.now(),
  };
  if (isObject(params.clientInfo)) record.clientInfo = params.clientInfo;
  if (client !== undefined) record.client = client;
  return record;
}

/** What a request of the session knows of its client. */
export function peerOf(record: SessionRecord): LegacyPeer {
  return {
    protocolVersion: record.protocolVersion,
    capabilities: record.capabilities,
    clientInfo: record.clientInfo as Implementation | undefined,
    logLevel: record.logLevel as LogLevel | undefined,
    sessionId: record.id,
  };
}
