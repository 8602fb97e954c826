/**
 * The run key a reserve job records for one leg of a workflow run: the run id
 * and the item (`owner/repo#12`, or the repository), with no attempt in it, so
 * a run or publish job run again finds its leg's reservation, and gather finds
 * which items reserved.
 */
export function legRun(runId: string, leg: string): string {
  return `${runId}:${leg}`;
}
