/** Which workflow a run belongs to, shared by sessions, fan-out and approvals. */

/**
 * The workflow a run belongs to, as sessions record it: GITHUB_WORKFLOW_REF
 * without the ref (`owner/repo/.github/workflows/agent.yml`). The same file
 * on another branch or a PR's merge ref is the same workflow.
 */
export function workflowIdentity(workflowRef: string | undefined): string | undefined {
  const ref = workflowRef?.trim();
  if (!ref) return undefined;
  const at = ref.lastIndexOf("@");
  return at > 0 ? ref.slice(0, at) : ref;
}
