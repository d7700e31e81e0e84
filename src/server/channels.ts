import { channel } from "../store/channels.js";
import type { ChangeEvent } from "./mcp-server.js";

/** The bus channels of the server layer, each with its message type (HTTP's are in `http/channels.ts`). */
export const ServerChannels = {
  /** List changes, resource updates and task status: every process delivers to its streams. */
  changes: channel<ChangeEvent>("changes"),
} as const;
