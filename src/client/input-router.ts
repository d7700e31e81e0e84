import type { JsonObject } from "../protocol/messages.js";
import { answerInput, inputContextOf } from "./input.js";
import type { InputContext, InputHandlers } from "./types.js";
import type { RequestOrigin } from "./wire.js";

/** A request in flight that brought its own `onInput`. */
interface OwnInput {
  handlers: InputHandlers;
  context: InputContext;
}

/**
 * Who answers a server's input requests: the request they belong to when it brought its own
 * `onInput`, else the client's callbacks. A legacy server request names its request only when
 * it came on that request's HTTP response stream; one that came on stdio or the GET stream is
 * taken as the request's only when a single request with its own `onInput` is in flight, as
 * nothing else tells which request asked.
 */
export class InputRouter {
  /** The client's own callbacks (`McpClientOptions.onInput`). */
  readonly client: InputHandlers;
  readonly #inFlight = new Set<OwnInput>();

  constructor(client: InputHandlers) {
    this.client = client;
  }

  /** The callbacks answering a request's modern input rounds. */
  handlersOf(own: InputHandlers | undefined): InputHandlers {
    return own ?? this.client;
  }

  /**
   * Records a request with its own callbacks as in flight, for server requests that come
   * without an origin; returns what ends the record.
   */
  track(handlers: InputHandlers, context: InputContext): () => void {
    const entry: OwnInput = { handlers, context };
    this.#inFlight.add(entry);
    return () => this.#inFlight.delete(entry);
  }

  /** Answers a server request (legacy era) through the callbacks it belongs to. */
  answer(
    method: string,
    params: JsonObject | undefined,
    origin?: RequestOrigin,
  ): Promise<JsonObject> {
    if (origin) {
      return answerInput(origin.onInput ?? this.client, method, params, inputContextOf(origin));
    }
    const [only] = this.#inFlight;
    if (only && this.#inFlight.size === 1) {
      return answerInput(only.handlers, method, params, { ...only.context, inferred: true });
    }
    return answerInput(this.client, method, params, inputContextOf(undefined));
  }
}
