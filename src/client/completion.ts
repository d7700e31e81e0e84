import { isObject, type JsonObject } from "../protocol/messages.js";
import type { RequestOptions } from "./types.js";

/** What `completion/complete` completes an argument of: a prompt or a resource template. */
export type CompletionRef =
  | { type: "ref/prompt"; name: string }
  | { type: "ref/resource"; uri: string };

/** The values a server suggests for an argument. */
export interface CompletionValues {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** Sends `completion/complete` through `client` and returns its completion (none when absent). */
export async function complete(
  client: {
    request(method: string, params: JsonObject, options: RequestOptions): Promise<JsonObject>;
  },
  params: JsonObject,
  options: RequestOptions,
): Promise<CompletionValues> {
  const { completion } = await client.request("completion/complete", params, options);
  return (isObject(completion) ? completion : { values: [] }) as unknown as CompletionValues;
}
