/**
 * A stand-in GitHub-hosted runner for the sandbox setup: `sudo`, `apt-get`
 * and `sysctl` scripts that record their argv, on a PATH that holds every
 * system tool except bwrap, socat, sudo, apt-get and sysctl (so "bwrap is
 * missing" is true for which()). `apt-get install` "installs" by linking the
 * real bwrap/socat into the stand-in folder; `sysctl` keeps the AppArmor
 * restriction in a state file that the stand-in bwrap obeys.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

const REPLACED = new Set(["bwrap", "socat", "sudo", "apt-get", "sysctl"]);

let sharedLinks: string | undefined;
/** A folder of links to every tool in /usr/bin, /usr/sbin and the docker CLI, without the replaced ones. */
function systemLinks(): string {
  if (sharedLinks) return sharedLinks;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-runner-links-"));
  for (const from of ["/usr/bin", "/usr/sbin", "/usr/local/bin"]) {
    for (const name of fs.readdirSync(from)) {
      if (REPLACED.has(name) || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(from, name), path.join(dir, name));
    }
  }
  sharedLinks = dir;
  return dir;
}

export interface FakeRunnerOptions {
  /** works: install succeeds; stale: install 404s until `apt-get update` ran; broken: install and update fail. */
  apt: "works" | "stale" | "broken";
  /** The AppArmor user-namespace restriction is on (bwrap fails until sysctl turns it off). */
  usernsRestricted?: boolean;
  bwrapInstalled?: boolean;
  socatInstalled?: boolean;
}

export interface FakeRunner {
  /** PATH for the action: stand-ins first, then the system tools minus the replaced ones. */
  path: string;
  /** The argv of every stand-in call, in order (`sudo -n apt-get install …`, `apt-get install …`). */
  calls(): string[];
  /** Whether `sysctl -w` turned the restriction off. */
  usernsRelaxed(): boolean;
}

export function fakeGitHubRunner(opts: FakeRunnerOptions): FakeRunner {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "fake-runner-"));
  const bin = path.join(root, "bin");
  fs.mkdirSync(bin);
  const log = path.join(root, "argv.log");
  const userns = path.join(root, "userns");
  fs.writeFileSync(log, "");
  fs.writeFileSync(userns, opts.usernsRestricted ? "1\n" : "0\n");
  const script = (name: string, body: string) => {
    fs.writeFileSync(path.join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  };
  // The real bwrap, unless the AppArmor restriction is on (as on Ubuntu 24.04).
  const gated = path.join(root, "bwrap-gated");
  fs.writeFileSync(
    gated,
    `#!/bin/sh
case "$1" in --help|--version) exec /usr/bin/bwrap "$@";; esac
[ "$(cat ${userns})" = 0 ] || { echo "bwrap: setting up uid map: Permission denied" >&2; exit 1; }
exec /usr/bin/bwrap "$@"
`,
    { mode: 0o755 },
  );
  const installBwrap = `ln -sf ${gated} ${bin}/bwrap`;
  const installSocat = `ln -sf /usr/bin/socat ${bin}/socat`;
  if (opts.bwrapInstalled) fs.symlinkSync(gated, path.join(bin, "bwrap"));
  if (opts.socatInstalled) fs.symlinkSync("/usr/bin/socat", path.join(bin, "socat"));

  script("sudo", `echo "sudo $*" >> ${log}\n[ "$1" = -n ] && shift\nexec "$@"`);
  script(
    "apt-get",
    `echo "apt-get $*" >> ${log}
mode=${opts.apt}
case " $* " in
  *" update "*)
    if [ $mode = broken ]; then echo "E: Failed to fetch https://ppa.example/dists/noble/InRelease  404  Not Found" >&2; exit 100; fi
    touch ${root}/updated; exit 0;;
  *" install "*)
    if [ $mode = broken ] || { [ $mode = stale ] && [ ! -e ${root}/updated ]; }; then
      echo "E: Failed to fetch http://azure.archive.ubuntu.com/ubuntu/pool/universe/b/bubblewrap/bubblewrap_0.9.0-1_amd64.deb  404  Not Found" >&2; exit 100
    fi
    for p in "$@"; do case "$p" in bubblewrap) ${installBwrap};; socat) ${installSocat};; esac; done
    exit 0;;
esac
exit 1`,
  );
  script(
    "sysctl",
    `echo "sysctl $*" >> ${log}
case "$1" in
  -n) cat ${userns};;
  -w) echo 0 > ${userns};;
  *) exit 1;;
esac`,
  );
  return {
    path: `${bin}:${systemLinks()}`,
    calls: () => fs.readFileSync(log, "utf8").split("\n").filter(Boolean),
    usernsRelaxed: () => fs.readFileSync(userns, "utf8").trim() === "0",
  };
}
