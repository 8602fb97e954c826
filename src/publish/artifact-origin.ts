/**
 * Which artifacts of a repository are its own. A pull request from a fork
 * runs workflows in the base repository too, and its jobs (agent code or
 * the fork's own workflow changes) can upload artifacts of any name. Only
 * runs of the repository's own branches count: session state is restored
 * only from them, and `agent-runner logs` lists only them.
 */

/** The `workflow_run` of a REST artifact, as GitHub gives it (ids absent on very old artifacts). */
export interface ArtifactWorkflowRun {
  repository_id?: number | null;
  head_repository_id?: number | null;
}

/** False when the run's head is another repository (a fork's pull request). */
export function fromRepositoryItself(run: ArtifactWorkflowRun): boolean {
  return run.head_repository_id == null || run.repository_id == null || run.head_repository_id === run.repository_id;
}
