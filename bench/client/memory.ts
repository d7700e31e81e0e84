import { type CallerId, connectCaller, loadClientModule } from "./callers.js";

/** What an idle connected client holds, for one kind of client. */
export interface IdleMemory {
  id: CallerId;
  clients: number;
  /** Heap growth per client, bytes, after a full collection before and after. */
  heapPerClient: number;
  /** Heap plus ArrayBuffers (sockets' buffers) per client, bytes. */
  totalPerClient: number;
}

type Gc = () => void;

function settle(gc: Gc): { heap: number; total: number } {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heap: heapUsed, total: heapUsed + arrayBuffers };
}

/**
 * Connects `clients` clients of kind `id` to `url`, each having made one call (so each holds
 * what a client in use holds), and reports the memory they hold while idle. Needs --expose-gc.
 */
export async function idleMemory(id: CallerId, url: string, clients: number): Promise<IdleMemory> {
  const gc = (globalThis as { gc?: Gc }).gc;
  if (!gc) throw new Error("run with node --expose-gc to measure memory per client");
  const module = await loadClientModule();
  // One client first, so module-level state (compiled code, caches) is not counted per client.
  const first = await connectCaller(id, module, url);
  await first.call();
  const before = settle(gc);
  const callers = [];
  for (let i = 0; i < clients; i++) {
    const caller = await connectCaller(id, module, url);
    await caller.call();
    callers.push(caller);
  }
  const after = settle(gc);
  await Promise.all([first, ...callers].map((caller) => caller.close()));
  return {
    id,
    clients,
    heapPerClient: (after.heap - before.heap) / clients,
    totalPerClient: (after.total - before.total) / clients,
  };
}
