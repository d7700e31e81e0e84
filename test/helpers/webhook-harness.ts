import type { AuthInfo } from "../../src/auth/types.js";
import type { McpServer } from "../../src/index.js";
import type { JsonObject } from "../../src/protocol/messages.js";
import type { ExtensionRequest, ServerExtension } from "../../src/server/extension.js";
import { eventsExtension } from "../../src/server/ext/events/index.js";

import type { WebhookOptions } from "../../src/server/ext/events/webhooks/options.js";
import { memoryStore } from "../../src/store/memory.js";
import type { McpStore } from "../../src/store/types.js";
import { createEventsServer } from "./events-server.js";

/** The issuer of the harness's principals. */
const ISSUER = "https://auth.example.com";

/** An events extension with webhooks on, over a store, and a way to call its methods. */
export interface WebhookHarness {
  server: McpServer;
  store: McpStore;
  extension: ServerExtension;
  /** Calls an events method as `subject` (no principal when undefined). */
  call(method: string, params: JsonObject, subject?: string): Promise<JsonObject>;
  /** Errors the extension reported (a hook that threw, a store that failed); `close` throws them. */
  errors: unknown[];
  close(): Promise<void>;
}

/**
 * The events extension of the events suites' server with `events.webhooks` set, built as a
 * handler builds it (the webhook module loaded on first use), its methods called directly: the
 * module is the subject here, not the HTTP plumbing.
 */
export function webhookHarness(
  options: WebhookOptions,
  store: McpStore = memoryStore(),
  server: McpServer = createEventsServer(),
): WebhookHarness {
  const errors: unknown[] = [];
  const host = { server, store, publish: () => undefined, onError: (e: unknown) => errors.push(e) };
  const extension = eventsExtension(host, { webhooks: options });
  if (!extension) throw new Error("The events extension is off");
  return {
    server,
    store,
    extension,
    errors,
    async call(method, params, subject) {
      const handler = extension.methods?.[method];
      if (!handler) throw new Error(`No method ${method}`);
      const auth: AuthInfo | undefined = subject
        ? { issuer: ISSUER, subject, scopes: [] }
        : undefined;
      // The module reads the params and the caller's auth of a request, nothing else of it.
      const request = { server, params, env: { auth } } as unknown as ExtensionRequest;
      return handler(request);
    },
    async close() {
      await extension.close?.();
      // Nothing the extension reported may go unnoticed.
      if (errors.length > 0)
        throw new AggregateError(errors, "The events extension reported errors");
    },
  };
}

/** The principal key of a harness subject, as `emit({ principal })` takes it. */
export const principalOf = (subject: string) => `${ISSUER}|${subject}`;
