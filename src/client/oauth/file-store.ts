import { link, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { hostname } from "node:os";
import { dirname } from "node:path";
import type { OAuthStore } from "./types.js";

/** Options of {@link fileOAuthStore}. */
export interface FileOAuthStoreOptions {
  /** How long a write waits for another writer's lock before it fails. @default 10_000 */
  lockTimeoutMs?: number;
  /** A lock older than this is a crashed writer's and is taken over. @default 30_000 */
  staleLockMs?: number;
}

type Values = Record<string, string>;

/** Who holds `path.lock`: what a waiter needs to tell a live writer from a dead one. */
interface LockOwner {
  pid: number;
  host: string;
  nonce: string;
}

const isErrno = (error: unknown, code: string): boolean =>
  (error as NodeJS.ErrnoException | undefined)?.code === code;

/** 64 random bits in hex: names no other writer (or process planting files) can predict. */
const randomSuffix = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(8)), (byte) =>
    byte.toString(16).padStart(2, "0"),
  ).join("");

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readValues(path: string): Promise<Values> {
  try {
    return JSON.parse(await readFile(path, "utf8")) as Values;
  } catch (error) {
    if (isErrno(error, "ENOENT")) return {};
    throw error;
  }
}

/** Creates `path` exclusively (0600): a file or link already there, planted or not, is refused. */
async function writeExclusive(path: string, text: string): Promise<void> {
  const handle = await open(path, "wx", 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return !isErrno(error, "ESRCH");
  }
}

/** True when the lock's writer is gone: its process ended (same host), or it is too old. */
async function isStale(lock: string, content: string, staleLockMs: number): Promise<boolean> {
  let owner: Partial<LockOwner> = {};
  try {
    owner = JSON.parse(content) as Partial<LockOwner>;
  } catch {
    // Half-written by a writer that died between create and write: judged by age alone.
  }
  if (owner.host === hostname() && typeof owner.pid === "number" && !isAlive(owner.pid)) {
    return true;
  }
  const { mtimeMs } = await stat(lock);
  return Date.now() - mtimeMs > staleLockMs;
}

/**
 * Takes a stale lock away by renaming it aside (atomic: of several waiters one wins), then
 * checks that what it moved is the lock it judged. A fresh lock taken by mistake is put back
 * with `link`, which, unlike `rename`, never replaces a lock created meanwhile.
 */
async function breakLock(lock: string, judged: string): Promise<void> {
  const aside = `${lock}.${randomSuffix()}.stale`;
  try {
    await rename(lock, aside);
  } catch (error) {
    if (isErrno(error, "ENOENT")) return;
    throw error;
  }
  const moved = await readFile(aside, "utf8").catch(() => judged);
  if (moved !== judged) await link(aside, lock).catch(() => {});
  await unlink(aside).catch(() => {});
}

/** Holds `path.lock` (exclusive create, across processes) while `work` runs. */
async function withLock<T>(
  path: string,
  options: Required<FileOAuthStoreOptions>,
  work: () => Promise<T>,
): Promise<T> {
  const lock = `${path}.lock`;
  const owner: LockOwner = {
    pid: process.pid,
    host: hostname(),
    nonce: randomSuffix(),
  };
  const mine = JSON.stringify(owner);
  const deadline = Date.now() + options.lockTimeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      await writeExclusive(lock, mine);
      break;
    } catch (error) {
      if (!isErrno(error, "EEXIST")) throw error;
    }
    const held = await readFile(lock, "utf8").catch(() => undefined);
    if (held !== undefined && (await isStale(lock, held, options.staleLockMs).catch(() => false))) {
      await breakLock(lock, held);
      continue;
    }
    if (Date.now() > deadline) {
      throw new Error(`${path} is locked by another writer (${lock}); remove it if none runs`);
    }
    await pause(wait + Math.random() * wait);
  }
  try {
    return await work();
  } finally {
    // Only our own lock is removed: one taken over as stale belongs to its new holder.
    if ((await readFile(lock, "utf8").catch(() => "")) === mine) await unlink(lock).catch(() => {});
  }
}

/** Writes `values` whole: an exclusive, uniquely named temporary file (0600), then a rename. */
async function replaceFile(path: string, values: Values): Promise<void> {
  const temporary = `${path}.${randomSuffix()}.tmp`;
  try {
    await writeExclusive(temporary, JSON.stringify(values, null, 2));
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
}

/**
 * An {@link OAuthStore} in one JSON file readable by its owner only (0600, its folder 0700).
 * Every change is a read-modify-write under a lock file (`<path>.lock`) shared with other
 * processes, so concurrent CLIs lose no entry; the file is replaced whole through a temporary
 * file, so a crash never leaves half a file.
 *
 * @example
 * ```ts
 * import { fileOAuthStore } from "mcp-mount/client/node";
 * const store = fileOAuthStore(`${process.env.HOME}/.config/my-app/oauth.json`);
 * ```
 */
export function fileOAuthStore(path: string, options: FileOAuthStoreOptions = {}): OAuthStore {
  const settings: Required<FileOAuthStoreOptions> = {
    lockTimeoutMs: options.lockTimeoutMs ?? 10_000,
    staleLockMs: options.staleLockMs ?? 30_000,
  };
  let writing: Promise<void> = Promise.resolve();

  const update = (change: (values: Values) => void): Promise<void> => {
    const next = writing.then(async () => {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await withLock(path, settings, async () => {
        // Read inside the lock: what another process wrote a moment ago is kept.
        const values = await readValues(path);
        change(values);
        await replaceFile(path, values);
      });
    });
    // One failed write is its caller's error, not every later one's.
    writing = next.catch(() => {});
    return next;
  };

  return {
    get: async (key) => {
      await writing;
      return (await readValues(path))[key];
    },
    set: (key, value) =>
      update((values) => {
        values[key] = value;
      }),
    delete: (key) =>
      update((values) => {
        delete values[key];
      }),
  };
}
