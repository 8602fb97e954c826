// `npm test`'s last command: vitest, with the run's temporary files in memory where the machine allows it.
//
// A run creates and deletes hundreds of thousands of small files (workspaces, git objects, runner temp
// folders, zips). On a disk file system the kernel's share of that (inode allocation, the journal,
// discard) is CPU time the two cores then lack: on a tmpfs a whole run spent about 15 % less time in
// the kernel (249 CPU-s instead of 292; the note of #33 has the runs). A tmpfs has to be mounted where the sandbox can see it (not
// /dev/shm, which bubblewrap replaces), and mounting needs root: as root, and where util-linux's unshare
// works, vitest runs in a mount namespace of its own with a tmpfs on its temp folder. The mount is
// private to that namespace: no other process sees it, and it goes away with the last process of the
// run, whatever ends it. Anywhere else (not root, no unshare, too little memory, TMPDIR set), vitest
// runs as it always did, on the system's temp folder.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const vitest = [process.execPath, path.join(root, "node_modules", "vitest", "vitest.mjs"), "run", ...process.argv.slice(2)];

/** A run peaks at about 0.4 GiB of temporary files; the tmpfs may hold 8 GiB (it takes memory only as used). */
const TMPFS_SIZE_GIB = 8;
/** Memory the machine must have free to spare the tmpfs its size and the tests their processes. */
const NEEDS_AVAILABLE_GIB = 2 * TMPFS_SIZE_GIB;

/** Why the run's temp folder stays on disk, or undefined when it can go to memory. */
function whyOnDisk() {
  if (process.env.TMPDIR) return "TMPDIR is set";
  if (process.platform !== "linux" || process.getuid?.() !== 0) return "mounting a tmpfs needs root";
  const available = Number(/^MemAvailable:\s+(\d+) kB$/m.exec(readFileSync("/proc/meminfo", "utf8"))?.[1] ?? 0) * 1024;
  if (available < NEEDS_AVAILABLE_GIB * 1024 ** 3) return `less than ${NEEDS_AVAILABLE_GIB} GiB of memory available`;
  const probe = spawnSync("unshare", ["--mount", "--propagation", "private", "true"], { stdio: "ignore" });
  if (probe.status !== 0) return "unshare --mount does not work here";
  return undefined;
}

function run(argv, env) {
  const child = spawn(argv[0], argv.slice(1), { stdio: "inherit", env });
  // npm and a terminal's ^C reach the whole process group; a TERM sent to this process alone goes on.
  for (const signal of ["SIGTERM", "SIGHUP"]) process.on(signal, () => child.kill(signal));
  process.on("SIGINT", () => {});
  return new Promise((resolve) => child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + os.constants.signals[signal] : 1))));
}

const why = whyOnDisk();
let code;
if (why) {
  console.info(`test-run: temporary files on disk (${why}).`);
  code = await run(vitest, process.env);
} else {
  const mountpoint = mkdtempSync(path.join(os.tmpdir(), "art-mem-"));
  console.info(`test-run: temporary files in memory (a tmpfs of ${TMPFS_SIZE_GIB} GiB on ${mountpoint}, in a mount namespace of the run's own).`);
  const inNamespace = [
    "unshare", "--mount", "--propagation", "private", "--",
    "sh", "-c", 'mount -t tmpfs -o "size=$1,mode=1777" agent-runner-tests "$2" && shift 2 && exec "$@"',
    "sh", `${TMPFS_SIZE_GIB}g`, mountpoint, ...vitest,
  ];
  // AGENT_RUNNER_TEST_TMPFS tells test/temp-folder.test.ts to check that the folder is the tmpfs.
  code = await run(inNamespace, { ...process.env, TMPDIR: mountpoint, AGENT_RUNNER_TEST_TMPFS: mountpoint });
  // The tmpfs went with the namespace; what is left is the empty folder it was mounted on.
  rmSync(mountpoint, { recursive: true, force: true });
}
process.exit(code);
