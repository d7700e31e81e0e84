import { invalidParams } from "../../../protocol/errors.js";
import type { TaskRecord, TaskStore } from "../../../store/types.js";
import type { ChangeEvent } from "../../mcp-server.js";
import { detailedTask } from "./task-results.js";

/**
 * The task records in the store, as the runner reads and writes them: lookups that answer
 * "not found" alike for unknown, expired and other principals' tasks, and writes by
 * compare-and-set that announce each visible change to listen streams.
 */
export class TaskLedger {
  readonly #store: TaskStore;
  readonly #publish: (event: ChangeEvent) => void;

  constructor(store: TaskStore, publish: (event: ChangeEvent) => void) {
    this.#store = store;
    this.#publish = publish;
  }

  /** Stores a new task; false when its principal is at `maxActive` unfinished tasks. */
  create(record: TaskRecord, maxActive: number): Promise<boolean> {
    return this.#store.create(record, maxActive);
  }

  /** The task, or undefined when unknown or expired. */
  get(id: string): Promise<TaskRecord | undefined> {
    return this.#store.get(id);
  }

  /** The task when it exists and belongs to `principal`; InvalidParams "not found" otherwise. */
  async owned(id: string, principal: string): Promise<TaskRecord> {
    const record = await this.#store.get(id);
    // One answer for unknown, expired and another principal's tasks (ext-tasks: security).
    if (!record || record.principal !== principal)
      throw invalidParams("Failed to retrieve task: Task not found");
    return record;
  }

  /**
   * Applies `change` (to a copy) by compare-and-set, retrying when another write came first;
   * resolves to the stored record, or undefined when `change` declined or the task is gone.
   * A new status or new input requests are published, unless `announce` is false.
   */
  async mutate(
    id: string,
    change: (current: TaskRecord) => TaskRecord | undefined,
    announce = true,
  ): Promise<TaskRecord | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const current = await this.#store.get(id);
      if (!current) return undefined;
      const next = change(structuredClone(current));
      if (!next) return undefined;
      next.version = current.version + 1;
      next.lastUpdatedAt = Math.max(Date.now(), current.lastUpdatedAt);
      if (!(await this.#store.replace(next, current.version))) continue;
      const inputsChanged =
        Object.keys(next.inputRequests).join() !== Object.keys(current.inputRequests).join();
      if (announce && (next.status !== current.status || inputsChanged))
        this.#publish({
          kind: "task",
          taskId: id,
          principal: next.principal,
          task: detailedTask(next),
        });
      return next;
    }
    throw new Error(`Task ${id}: too many concurrent writes`);
  }
}
