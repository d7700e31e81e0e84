// The test command's set-up step: `npm test` runs this before it builds or runs anything, so a
// machine with only Node and npm either gets what the suites need or is told, in one message,
// what to install. It needs two things that are not npm packages of ours:
// - a Redis server binary (no npm package ships one): `REDIS_SERVER`, `redis-server` or
//   Valkey's `valkey-server` on PATH; on Debian or Ubuntu, as root or with passwordless sudo,
//   it installs Debian's `redis-server` with apt;
// - a Chromium: the system's (or `CHROMIUM_PATH`), else the headless shell inside the
//   @sparticuz/chromium dev dependency, unpacked here once so the suites never race to unpack it.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { findOnPath, redisServerBinary } from "../examples/shared/redis-server.js";
import { findChromium } from "./helpers/browser.js";

/** The fields of /etc/os-release that say which family a Linux belongs to. */
function osFamily(): string[] {
  try {
    const text = readFileSync("/etc/os-release", "utf8");
    const field = (name: string) =>
      new RegExp(`^${name}="?([^"\\n]*)"?$`, "m").exec(text)?.[1]?.split(/\s+/) ?? [];
    return [...field("ID"), ...field("ID_LIKE")];
  } catch {
    return [];
  }
}

const family = osFamily();
const debianLike = family.includes("debian") || family.includes("ubuntu");

/** The command that installs Redis on this platform, for the message. */
function installAdvice(): string {
  if (process.platform === "darwin") return "brew install redis";
  if (debianLike) return "sudo apt-get install redis-server";
  if (family.some((id) => ["fedora", "rhel", "centos"].includes(id)))
    return "sudo dnf install redis";
  return "apt-get install redis-server (Debian, Ubuntu), dnf install redis (Fedora, RHEL) or brew install redis (macOS)";
}

/** Runs one command quietly; its output is shown only when it fails. */
function run(command: string, args: string[]): boolean {
  const result = spawnSync(command, args, {
    encoding: "utf8",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (result.status === 0) return true;
  process.stderr.write(`${[command, ...args].join(" ")} failed:\n${result.stderr ?? ""}`);
  return false;
}

/** Installs Debian's redis-server where apt may be used without a password; the binary, or undefined. */
function installRedis(): string | undefined {
  const apt = findOnPath("apt-get");
  if (!debianLike || !apt) return undefined;
  let prefix: string[] = [];
  if (process.getuid?.() !== 0) {
    const sudo = findOnPath("sudo");
    if (!sudo || spawnSync(sudo, ["-n", "true"]).status !== 0) return undefined;
    prefix = [sudo, "-n"];
  }
  const [command, ...rest] = [...prefix, apt];
  console.log("tests: no Redis server binary; installing Debian's redis-server with apt-get");
  if (!run(command!, [...rest, "update", "-qq"])) return undefined;
  if (!run(command!, [...rest, "install", "-y", "-qq", "redis-server"])) return undefined;
  return redisServerBinary();
}

const redis = redisServerBinary() ?? installRedis();
if (!redis) {
  console.error(
    `npm test needs a Redis server binary and found none (redis-server or valkey-server on PATH): install one with \`${installAdvice()}\`, or set REDIS_SERVER=/path/to/redis-server.`,
  );
  process.exit(1);
}

const redisVersion = spawnSync(redis, ["--version"], { encoding: "utf8", timeout: 30_000 });
if (redisVersion.status !== 0) {
  console.error(
    `npm test needs a Redis server binary that runs; ${redis} did not: ${redisVersion.error?.message ?? redisVersion.stderr.trim()}. Install one with \`${installAdvice()}\`, or set REDIS_SERVER=/path/to/redis-server.`,
  );
  process.exit(1);
}

const chromium = await findChromium();
const version = spawnSync(chromium.path, ["--version"], { encoding: "utf8", timeout: 30_000 });
if (version.status !== 0) {
  console.error(
    `npm test needs a Chromium that starts; ${chromium.path} (${chromium.source}) did not: ${version.error?.message ?? version.stderr.trim()}. Install your system's chromium, or set CHROMIUM_PATH.`,
  );
  process.exit(1);
}
console.log(
  `tests: ${redisVersion.stdout.trim().split(" ").slice(0, 3).join(" ")} at ${redis}; ${version.stdout.trim()} at ${chromium.path} (${chromium.source})`,
);
