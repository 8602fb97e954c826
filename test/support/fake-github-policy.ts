/**
 * The repository settings that make GitHub refuse a workflow's writes, for
 * the fake GitHub, answering in GitHub's words and statuses:
 *
 * - "Allow GitHub Actions to create and approve pull requests" off (the
 *   default of new repositories and organizations): `POST /pulls` by the
 *   workflow token → 403 `GitHub Actions is not permitted to create or
 *   approve pull requests.` (as GitHub answered in
 *   peter-evans/create-pull-request#3979, danielroe/uppt#11).
 * - No `pull-requests: write` on the token: writes to pulls → 403 `Resource
 *   not accessible by integration`.
 * - A ruleset with "Restrict creations": a new branch is refused, by git
 *   (`GH013: Repository rule violations found for refs/heads/…` and
 *   `- Cannot create ref due to creations being restricted.`) and by the refs
 *   API (422 `Repository rule violations found\n\nCannot create ref due to
 *   creations being restricted.\n\n`).
 * - No `workflows` permission (the workflow token never has it): a push or a
 *   ref update whose new commits change `.github/workflows/` is refused with
 *   `refusing to allow a GitHub App to create or update workflow `<path>`
 *   without `workflows` permission`.
 *
 * Pushes go to the repository's bare origin on disk, so git's refusals come
 * from a pre-receive hook written there: git prints its lines as `remote: …`,
 * as it does GitHub's.
 */
import { chmod, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { execFileFromHelper } from "./spawn-helper.js";

/** git from the tests' spawn helper (spawn-helper.ts): the worker forks less. */
const run = execFileFromHelper;

export interface RepoPolicy {
  /** "Allow GitHub Actions to create and approve pull requests" (repository or organization). Default true. */
  actionsCreatePullRequests?: boolean;
  /** The token's `pull-requests` permission. Default `write`. */
  pullRequestsPermission?: "write" | "read" | "none";
  /** A ruleset that restricts creating branches (every branch). Default false. */
  restrictBranchCreation?: boolean;
  /** Whether the token holds the `workflows` permission. Default true (the fake's token is allowed everything). */
  workflowsPermission?: boolean;
}

export const PR_CREATION_NOT_PERMITTED = "GitHub Actions is not permitted to create or approve pull requests.";
export const NOT_ACCESSIBLE = "Resource not accessible by integration";
export const RULESET_CREATION = "Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n";

export function workflowRefusal(file: string): string {
  return `refusing to allow a GitHub App to create or update workflow \`${file}\` without \`workflows\` permission`;
}

/** The first workflow file the commits `sha` brings (those no ref of the repository has yet) change, if any. */
export async function workflowChangeIn(gitDir: string, sha: string): Promise<string | undefined> {
  const { stdout } = await run("git", ["--git-dir", gitDir, "rev-list", sha, "--not", "--all"]);
  for (const c of stdout.split("\n").filter(Boolean)) {
    const changed = await run("git", ["--git-dir", gitDir, "diff-tree", "--no-commit-id", "-r", "--root", "--name-only", c, "--", ".github/workflows"]);
    const file = changed.stdout.split("\n").find(Boolean);
    if (file) return file;
  }
  return undefined;
}

/** The pre-receive hook that refuses pushes as GitHub does under `policy`; removed when nothing is refused. */
export async function writePolicyHook(gitDir: string, policy: RepoPolicy, rulesUrl: string): Promise<void> {
  const hook = path.join(gitDir, "hooks", "pre-receive");
  const restrict = policy.restrictBranchCreation === true;
  const noWorkflows = policy.workflowsPermission === false;
  if (!restrict && !noWorkflows) return rm(hook, { force: true });
  const script = `#!/bin/bash
z=0000000000000000000000000000000000000000
status=0
while read -r old new ref; do
  case "$ref" in refs/heads/*) ;; *) continue ;; esac
  [ "$new" = "$z" ] && continue
  if ${restrict} && [ "$old" = "$z" ]; then
    enc=$(printf '%s' "$ref" | sed 's|/|%2F|g')
    {
      echo "error: GH013: Repository rule violations found for $ref."
      echo "Review all repository rules at ${rulesUrl}?ref=$enc"
      echo ""
      echo "- Cannot create ref due to creations being restricted."
      echo ""
    } >&2
    status=1
    continue
  fi
  if ${noWorkflows}; then
    for c in $(git rev-list "$new" --not --all); do
      f=$(git diff-tree --no-commit-id -r --root --name-only "$c" -- .github/workflows | head -n 1)
      if [ -n "$f" ]; then
        echo "refusing to allow a GitHub App to create or update workflow \\\`$f\\\` without \\\`workflows\\\` permission" >&2
        status=1
        break
      fi
    done
  fi
done
exit $status
`;
  await writeFile(hook, script);
  await chmod(hook, 0o755);
}
