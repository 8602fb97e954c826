// `npm test`'s last command: vitest, with the run's temporary files in memory where the machine allows it.
//
// A run creates and deletes hundreds of thousands of small files (workspaces, git objects, runner temp
// folders, zips). On a disk file system the kernel's share of that (inode allocation, the journal,
// discard) is CPU time the two cores then lack: on a tmpfs a whole run spent about 15 % less time in
// the kernel (249 CPU-s instead of 292; the note of #33 has the runs). A tmpfs has to be mounted where
// the sandbox can see it (not /dev/shm, which bubblewrap replaces), and mounting needs root: as root,
// where util-linux's unshare and mount work, vitest runs in a mount namespace of its own with a tmpfs on
// its temp folder. The mount is private to that namespace, so it never appears on the machine and goes
// away with the last process of the run, whatever ends it. That also means no process outside the run
// sees the files: a Docker engine, which bind-mounts from the machine's namespace, would find the folder
// empty, so a machine where one answers keeps the files on disk. Anywhere else (not root, TMPDIR set,
// too little memory), vitest runs as it always did, on the system's temp folder.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const vitest = [process.execPath, path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", ...process.argv.slice(2)];

/** A whole run peaks at about 0.4 GiB of temporary files: room for five times that, and no more of the memory. */
const TMPFS_SIZE_GIB = 2;
/** Memory the machine must have free to give the tmpfs its size and the tests their processes. */
const NEEDS_AVAILABLE_GIB = 8;
/**
 * Mounts the tmpfs on "$2" with size "$1", then runs the rest of the arguments in its place. Mode 1777 as
 * /tmp has, for any process of the run whatever its user; only the run's processes see the mount at all.
 */
const MOUNT_THEN_EXEC = 'mount -t tmpfs -o "size=$1,mode=1777,nosuid,nodev" agent-runner-tests "$2" && shift 2 && exec "$@"';

function inPrivateNamespace(size, mountpoint, argv) {
  return ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", MOUNT_THEN_EXEC, "sh", size, mountpoint, ...argv];
}

/** Runs argv to its end, quietly: its exit code, or undefined when it could not start or ran out of time. */
function exitCodeOf(argv) {
  const r = spawnSync(argv[0], argv.slice(1), { stdio: "ignore", timeout: 15_000, killSignal: "SIGKILL" });
  return r.error ? (r.error.code === "ENOENT" ? 127 : undefined) : (r.status ?? undefined);
}

/**
 * Whether a Docker engine may answer: only "no docker CLI" or a quick failure of `docker info` say no. A
 * slow answer (an engine started on demand) counts as yes, since the Docker tests would then find it.
 */
function dockerMayAnswer() {
  const code = exitCodeOf(["docker", "info", "--format", "{{.ServerVersion}}"]);
  return code === undefined || code === 0;
}

/** Why the run's temp folder stays on disk, or undefined when it can go to memory. */
function whyOnDisk() {
  if (process.env.TMPDIR) return "TMPDIR is set";
  if (process.platform !== "linux" || process.getuid?.() !== 0) return "mounting a tmpfs needs root";
  const available = Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) * 1024;
  if (available < NEEDS_AVAILABLE_GIB * 1024 ** 3) return `less than ${NEEDS_AVAILABLE_GIB} GiB of memory available`;
  if (dockerMayAnswer()) return "a Docker engine answers here, and it could not see a tmpfs of the run's own";
  // The real thing, on a throwaway folder: unshare can work where mounting is refused (a container's profile).
  const probe = mkdtempSync(path.join(os.tmpdir(), "art-probe-"));
  try {
    if (exitCodeOf(inPrivateNamespace("1m", probe, ["true"])) !== 0) return "unshare --mount or mount -t tmpfs does not work here";
  } finally {
    removeEmptyFolder(probe);
  }
  return undefined;
}

/**
 * Removes a folder a tmpfs was mounted on, seen from this (the machine's) namespace, where it is empty.
 * Never recursively: should it hold anything, that is not ours to delete.
 */
function removeEmptyFolder(dir) {
  try {
    rmdirSync(dir);
  } catch (error) {
    console.warn(`test-run: left ${dir} in place: ${error.message}`);
  }
}

/** Runs argv with this process's terminal; resolves to its exit code, or the signal that ended it. */
function run(argv, env) {
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit", env });
  // npm and a terminal's ^C reach the whole process group; a TERM or HUP sent to this process alone is passed on.
  const passOn = (signal) => child.kill(signal);
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, passOn);
  process.on("SIGINT", () => {});
  return new Promise((resolve) => {
    child.on("error", (error) => resolve({ code: 1, error }));
    child.on("exit", (code, signal) => resolve({ code, signal }));
  });
}

const PASSED_ON = ["SIGINT", "SIGTERM", "SIGHUP"];

function exitLike({ code, signal, error }) {
  if (error) console.error(`test-run: could not start ${error.path ?? "vitest"}: ${error.message}`);
  if (signal && PASSED_ON.includes(signal)) {
    // Ended by an interrupt: end the same way (a crash signal would dump this process's core instead).
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }
  if (signal) process.exit(128 + os.constants.signals[signal]);
  process.exit(code ?? 1);
}

const why = whyOnDisk();
if (why) {
  console.info(`test-run: temporary files on disk (${why}).`);
  exitLike(await run(vitest, process.env));
} else {
  const mountpoint = mkdtempSync(path.join(os.tmpdir(), "art-mem-"));
  console.info(`test-run: temporary files in memory (a tmpfs of at most ${TMPFS_SIZE_GIB} GiB on ${mountpoint}, in a mount namespace of the run's own).`);
  // AGENT_RUNNER_TEST_TMPFS* and _RUN_PID let test/temp-folder.test.ts check the folder is that tmpfs, unseen outside.
  const env = {
    ...process.env,
    TMPDIR: mountpoint,
    AGENT_RUNNER_TEST_TMPFS: mountpoint,
    AGENT_RUNNER_TEST_TMPFS_GIB: String(TMPFS_SIZE_GIB),
    AGENT_RUNNER_TEST_RUN_PID: String(process.pid),
  };
  const ended = await run(inPrivateNamespace(`${TMPFS_SIZE_GIB}g`, mountpoint, vitest), env);
  // The tmpfs went with the namespace; what is left here is the empty folder it was mounted on.
  removeEmptyFolder(mountpoint);
  exitLike(ended);
}
