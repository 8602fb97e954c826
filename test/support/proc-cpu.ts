/** CPU time from /proc, for test/cpu-meter.ts. */
import { readFileSync } from "node:fs";

/** Linux reports process times in /proc in units of 1/100 s, whatever the kernel's own tick. */
const MS_PER_PROC_TICK = 10;

/** This process's CPU and that of the children it has reaped, in ms; undefined where /proc has no stat. */
export function cpuWithReapedChildrenMs(stat = "/proc/self/stat"): number | undefined {
  let text: string;
  try {
    text = readFileSync(stat, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start after the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // utime, stime, cutime, cstime: fields 14 to 17 of proc_pid_stat(5), here 11 to 14.
  const ticks = [11, 12, 13, 14].map((i) => Number(fields[i]));
  return ticks.every(Number.isFinite) ? ticks.reduce((a, b) => a + b, 0) * MS_PER_PROC_TICK : undefined;
}
