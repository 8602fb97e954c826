/**
 * GitHub's own refusals during delivery, recognised by GitHub's words, each
 * with what it means and what to change. A repository on GitHub's default
 * settings refuses pull requests opened by GitHub Actions; a token never
 * holds the `workflows` permission; rulesets can forbid new branches. The
 * person reading the comment gets the setting's name and a way forward, not
 * a bare HTTP status.
 */
import * as z from "../shared/zod.js";
import { codeName } from "./markdown-code.js";

export type RefusalKind = "pull-requests-not-permitted" | "pull-requests-permission" | "pull-request-invalid" | "workflows-permission" | "ruleset";

export interface Refusal {
  kind: RefusalKind;
  /** Markdown for the comment: what GitHub said and which setting decides it. */
  explanation: string;
}

/** Where GitHub's settings live, written as GitHub's pages name them. */
export const SETTING_CREATE_PULL_REQUESTS = "Settings → Actions → General → Workflow permissions → Allow GitHub Actions to create and approve pull requests";

/** GitHub's 403 when the repository (or its organization) keeps Actions from opening pull requests. */
const NOT_PERMITTED = /GitHub Actions is not permitted to create or approve pull requests/i;
/** GitHub's 403 when the token lacks a permission (here `pull-requests: write`). */
const NOT_ACCESSIBLE = /Resource not accessible by integration/i;
/** The push (git or the refs API) of a commit that changes a workflow file, with a token that lacks `workflows`. */
const WORKFLOWS = /refusing to allow a GitHub App to create or update workflow (?:`([^`]*)`)? ?without `workflows?` permission/i;
/** A ruleset's refusal: `GH013: Repository rule violations found` (git), `Repository rule violations found` (API). */
const RULESET = /GH013|Repository rule violations found/i;

/** An octokit RequestError as GitHub answered it: the status, the message and a 422's validation messages. */
const ApiFailure = z.object({
  status: z.number(),
  response: z.optional(
    z.looseObject({
      data: z.optional(z.looseObject({ message: z.optional(z.string()), errors: z.optional(z.array(z.looseObject({ message: z.optional(z.string()) }))) })),
    }),
  ),
});

/** Status and words of a failed API call; undefined when it is not one (a network error). */
export function apiFailure(e: unknown): { status: number; message: string } | undefined {
  const parsed = ApiFailure.safeParse(e);
  if (!parsed.success) return undefined;
  const data = parsed.data.response?.data;
  const details = (data?.errors ?? []).map((x) => x.message).filter((m): m is string => Boolean(m));
  const message = [data?.message ?? (e instanceof Error ? e.message : ""), ...details].filter(Boolean).join(": ");
  return { status: parsed.data.status, message };
}

/** The compare page where a person opens the pull request GitHub would not let the workflow open. */
export function compareUrl(serverUrl: string, repo: string, base: string, head: string): string {
  // encodeURIComponent leaves `!'()*`: an unbalanced `)` would end a Markdown link's target early, so they are encoded too.
  const enc = (ref: string) =>
    ref
      .split("/")
      .map((part) => encodeURIComponent(part).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`))
      .join("/");
  return `${serverUrl.replace(/\/+$/, "")}/${repo}/compare/${enc(base)}...${enc(head)}?expand=1`;
}

/** Why opening the pull request failed (the branch is pushed): GitHub's 403s and 422s, by GitHub's message. */
export function pullRequestRefusal(status: number | undefined, message: string): Refusal {
  if (NOT_PERMITTED.test(message))
    return {
      kind: "pull-requests-not-permitted",
      explanation:
        `GitHub refused to open the pull request: _GitHub Actions is not permitted to create or approve pull requests_. ` +
        `New repositories and organizations start with this switched off. A repository admin turns it on in **${SETTING_CREATE_PULL_REQUESTS}** ` +
        `(in an organization, an owner first allows it in the organization's **Settings → Actions → General**, or the repository's box stays greyed out).`,
    };
  if (status === 403 && NOT_ACCESSIBLE.test(message))
    return {
      kind: "pull-requests-permission",
      explanation:
        "GitHub refused to open the pull request: _Resource not accessible by integration_. The workflow's token lacks `pull-requests: write`: " +
        "add it to the job's `permissions:` (next to `contents: write`).",
    };
  return { kind: "pull-request-invalid", explanation: `GitHub refused to open the pull request${status ? ` (${status})` : ""}: ${oneLine(message)}.` };
}

/**
 * A refused push (git or the refs API) GitHub explains: undefined for others
 * (a network error, a moved branch). `target`: Agent Runner's own branch
 * (`own`, named by `branch-prefix`) or the pull request's branch it commits to.
 */
export function pushRefusal(detail: string, target: { own: true; branchPrefix: string } | { own: false; branch: string }): Refusal | undefined {
  const workflow = WORKFLOWS.exec(detail);
  if (workflow)
    return {
      kind: "workflows-permission",
      explanation:
        `GitHub refused the push: the change edits a workflow file${workflow[1] ? ` (${codeName(workflow[1])})` : ""}, and GitHub lets a token change \`.github/workflows/\` only with the \`workflows\` permission, ` +
        "which the workflow's own token (`GITHUB_TOKEN`) can never have. To deliver workflow changes, pass `github-token` a token that has it " +
        "(a GitHub App installation token with **Workflows: write**, or a fine-grained personal access token with **Workflows: write**); " +
        "otherwise ask for the change without the workflow files, or apply the patch below yourself.",
    };
  if (RULESET.test(detail) && target.own)
    return {
      kind: "ruleset",
      explanation:
        "GitHub refused the push: a repository ruleset blocks it (_GH013: Repository rule violations found_; a rule such as **Restrict creations** " +
        "forbids new branches). In **Settings → Rules → Rulesets** (or the organization's rulesets), exclude " +
        `${codeName(`${target.branchPrefix}**`)} from the ruleset's target branches, or set \`branch-prefix\` to a pattern the ruleset allows; or put a GitHub App on the ruleset's bypass list and pass its installation token as \`github-token\`.`,
    };
  if (RULESET.test(detail) && !target.own)
    return {
      kind: "ruleset",
      explanation:
        `GitHub refused the push: a repository ruleset protects ${codeName(target.branch)} (_GH013: Repository rule violations found_, e.g. **Require a pull request before merging**). ` +
        "Set `deliver: pull-request` to get the change as a pull request of its own, stacked on this one; or, in **Settings → Rules → Rulesets** " +
        "(or the organization's rulesets), put a GitHub App on the ruleset's bypass list and pass its installation token as `github-token`.",
    };
  return undefined;
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ").trim().slice(0, 300).replace(/[.\s]+$/, "");
}
