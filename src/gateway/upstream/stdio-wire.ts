import { StdioWire } from "../../client/stdio.js";
import { isMcpError } from "../../protocol/errors.js";
import { messageOf, retryableError } from "./retryable.js";

/**
 * The stdio wire of a supervised child: every request it fails (the child exited, or was
 * closed) fails with a retryable error that names the exit, not the child's stderr, which goes
 * to the operator's log and not to clients. Node only: `stdioUpstream` loads it when it first
 * starts a child, so that `mcp-mount/gateway` imports nothing of Node's before.
 */
export class UpstreamStdioWire extends StdioWire {
  upstreamName = "";
  /** Why the wire failed, once it did: "exited (code 1)". */
  failure: string | undefined;

  override fail(error: unknown): void {
    if (isMcpError(error)) {
      super.fail(error);
      return;
    }
    this.failure ??= this.#reason(error);
    super.fail(retryableError(`The upstream ${this.upstreamName} ${this.failure}`, error));
  }

  #reason(error: unknown): string {
    // A program that cannot be run fails to spawn; Node gives it a negative exit code too.
    if (error instanceof Error && "syscall" in error && String(error.syscall).startsWith("spawn")) {
      return `could not be run: ${error.message}`;
    }
    const { exitCode, signalCode } = this.child;
    if (exitCode !== null || signalCode !== null)
      return `exited (${signalCode ?? `code ${exitCode}`})`;
    if (messageOf(error) === "Connection closed") return "was closed";
    return `failed: ${messageOf(error)}`;
  }
}
