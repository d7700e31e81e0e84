import type { JsonObject } from "../protocol/messages.js";
import { type Channel, channel } from "../store/channels.js";

/** The input requests an upstream may send mid-call, which the gateway passes on to its client. */
export type InputMethod = "elicitation/create" | "sampling/createMessage" | "roots/list";

/** One input request of the upstream, waiting for the client's answer. */
export interface UpstreamInput {
  method: InputMethod;
  params: JsonObject;
}

/** A JSON-RPC error object, as an error crosses between processes. */
export interface WireError {
  code: number;
  message: string;
  data?: unknown;
}

/**
 * What one gateway process tells another about an upstream call waiting for input, on the
 * call's channel. A retry that lands away from the holder sends the client's `answer`s (each
 * exchange named by its `reply` id); the holder says it has them (`ack`), then how the call went
 * on: its `result`, its next `input` requests, or an `error`. `cancel` means the client gave up.
 */
export type CallMessage =
  | { t: "answer"; reply: string; answers: JsonObject }
  | { t: "cancel" }
  | { t: "ack"; reply: string }
  | { t: "result"; reply: string; result: JsonObject }
  | { t: "input"; reply: string; inputs: Record<string, UpstreamInput> }
  | { t: "error"; reply: string; error: WireError };

/** Every bus channel of the gateway's input bridge, each with its message type. */
export const GatewayChannels = {
  /**
   * What processes say about one upstream call. Sharded by the call: on a Redis Cluster it
   * reaches only the node owning the call's slot, where its lease lives too.
   */
  call: (callId: string): Channel<CallMessage> => channel(`gateway:call:${callId}`, callId),
} as const;

/** The lease naming the process whose upstream call this is, in the call's hash slot. */
export function callLeaseKey(callId: string): string {
  return `${callId}/gateway-call`;
}
