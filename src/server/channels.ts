import { type Channel, channel, publish } from "../store/channels.js";
import type { EventBus } from "../store/types.js";
import type { ChangeEvent } from "./mcp-server.js";

/**
 * A change on the bus, with an id: a bus may deliver a message twice (a Redis Cluster's
 * subscriber moving between nodes), and a process that hears one twice delivers it once.
 */
export type BusChange = ChangeEvent & { eid?: string };

/** The bus channels of the server layer, each with its message type (HTTP's are in `http/channels.ts`). */
export const ServerChannels: { readonly changes: Channel<BusChange> } = {
  /** List changes, resource updates and task status: every process delivers to its streams. */
  changes: channel<BusChange>("changes"),
} as const;

/** Publishes a change for every process, with a fresh id. */
export function publishChange(bus: EventBus, event: ChangeEvent): Promise<number> {
  return publish(bus, ServerChannels.changes, { ...event, eid: crypto.randomUUID() });
}
