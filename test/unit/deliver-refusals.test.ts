/**
 * GitHub's refusals read as octokit receives them from the fake GitHub
 * (which answers in GitHub's words, fake-github-policy.ts), and the pushes'
 * words as git prints them: each is recognised and names its setting.
 */
import { afterEach, describe, expect, it } from "vitest";
import { GitHubApi } from "../../src/github/api.js";
import { createOctokit } from "../../src/github/client.js";
import type { Nodes } from "mdast";
import { fromMarkdown } from "mdast-util-from-markdown";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { gfm } from "micromark-extension-gfm";
import { codeName } from "../../src/publish/markdown-code.js";
import { apiFailure, compareUrl, pullRequestRefusal, pushRefusal, SETTING_CREATE_PULL_REQUESTS } from "../../src/publish/deliver-refusals.js";
import { toSafeMarkdown } from "../../src/publish/safe-markdown.js";
import { startFakeGitHub, type FakeGitHub } from "../support/fake-github.js";

const silent = { debug: () => {}, info: () => {}, warning: () => {}, error: () => {}, group: <T>(_t: string, fn: () => Promise<T>) => fn() };

let gh: FakeGitHub | undefined;
afterEach(async () => {
  await gh?.close();
  gh = undefined;
});

async function refusedCreate(policy: Parameters<FakeGitHub["setPolicy"]>[0]): Promise<unknown> {
  gh = await startFakeGitHub();
  await gh.setPolicy(policy);
  const api = new GitHubApi(await createOctokit({ token: gh.token, apiUrl: gh.url, log: silent, retryBaseMs: 1 }), { owner: "octo-org", name: "octo-repo", fullName: "octo-org/octo-repo" });
  return api.createPullRequest({ title: "t", head: "agent/1-x", base: "main", body: toSafeMarkdown("b", { serverUrl: gh.serverUrl }), draft: true }).then(
    () => expect.fail("GitHub opened the pull request"),
    (e: unknown) => e,
  );
}

describe("a refused pull request, as octokit receives it", () => {
  it("'Allow GitHub Actions to create and approve pull requests' off: 403, recognised, the setting named", async () => {
    const failed = apiFailure(await refusedCreate({ actionsCreatePullRequests: false }));
    expect(failed).toEqual({ status: 403, message: "GitHub Actions is not permitted to create or approve pull requests." });
    const r = pullRequestRefusal(failed!.status, failed!.message);
    expect(r.kind).toBe("pull-requests-not-permitted");
    expect(r.explanation).toContain(SETTING_CREATE_PULL_REQUESTS);
    expect(r.explanation).toContain("organization");
  });

  it("no pull-requests: write: 403 Resource not accessible by integration, the permission named", async () => {
    const failed = apiFailure(await refusedCreate({ pullRequestsPermission: "read" }));
    expect(failed?.status).toBe(403);
    const r = pullRequestRefusal(failed!.status, failed!.message);
    expect(r.kind).toBe("pull-requests-permission");
    expect(r.explanation).toContain("`pull-requests: write`");
  });

  it("a 422 (Validation Failed) keeps GitHub's own reason from its errors list", async () => {
    gh = await startFakeGitHub();
    const api = new GitHubApi(await createOctokit({ token: gh.token, apiUrl: gh.url, log: silent, retryBaseMs: 1 }), { owner: "octo-org", name: "octo-repo", fullName: "octo-org/octo-repo" });
    // No such head branch: GitHub answers 422 with `{field: head, code: invalid}`; a custom error carries a message.
    gh.failNext("POST /repos/{owner}/{repo}/pulls", { status: 422, body: { message: "Validation Failed", errors: [{ resource: "PullRequest", code: "custom", message: "No commits between main and agent/1-x" }], status: "422" } });
    const e = await api.createPullRequest({ title: "t", head: "agent/1-x", base: "main", body: toSafeMarkdown("b", { serverUrl: gh.serverUrl }), draft: true }).catch((x: unknown) => x);
    const failed = apiFailure(e);
    expect(failed).toEqual({ status: 422, message: "Validation Failed: No commits between main and agent/1-x" });
    const r = pullRequestRefusal(failed!.status, failed!.message);
    expect(r.kind).toBe("pull-request-invalid");
    expect(r.explanation).toBe("GitHub refused to open the pull request (422): Validation Failed: No commits between main and agent/1-x.");
  });

  it("not an API error (a network failure): no status to read", () => {
    expect(apiFailure(new Error("socket hang up"))).toBeUndefined();
  });
});

describe("a refused push, in git's words and the refs API's", () => {
  const own = { own: true as const, branchPrefix: "agent/" };
  it("a ruleset (GH013 from git, 'Repository rule violations found' from the API): the rulesets page and the branch pattern", () => {
    const git = "remote: error: GH013: Repository rule violations found for refs/heads/agent/7-x. remote: - Cannot create ref due to creations being restricted. ! refs/heads/agent/7-x [remote rejected] (push declined due to repository rule violations)";
    for (const detail of [git, "HTTP 422: Repository rule violations found\n\nCannot create ref due to creations being restricted.\n\n"]) {
      const r = pushRefusal(detail, own);
      expect(r?.kind).toBe("ruleset");
      expect(r?.explanation).toContain("Settings → Rules → Rulesets");
      expect(r?.explanation).toContain(codeName("agent/**"));
    }
    // On a pull request's own branch, the advice is the bypass list or a stacked pull request, not the prefix.
    const pr = pushRefusal(git, { own: false, branch: "feature/x" });
    expect(pr?.explanation).toContain(codeName("feature/x"));
    expect(pr?.explanation).toContain("deliver: pull-request");
    expect(pr?.explanation).not.toContain("branch-prefix");
  });

  it("a workflow file without the `workflows` permission: the file and the token that can push it", () => {
    const r = pushRefusal("! [remote rejected] agent/7-x -> agent/7-x (refusing to allow a GitHub App to create or update workflow `.github/workflows/ci.yml` without `workflows` permission)", own);
    expect(r?.kind).toBe("workflows-permission");
    expect(r?.explanation).toContain(codeName(".github/workflows/ci.yml"));
    expect(r?.explanation).toContain("`github-token`");
  });

  it("anything else (a moved branch, a network error) is not explained as a setting", () => {
    expect(pushRefusal("! [rejected] agent/7-x -> agent/7-x (stale info)", own)).toBeUndefined();
    expect(pushRefusal("fatal: unable to access 'https://github.com/o/r/': Could not resolve host", own)).toBeUndefined();
  });
});

describe("the compare page", () => {
  it("is built from the server URL (GHES too), each path part encoded", () => {
    expect(compareUrl("https://github.com", "o/r", "main", "agent/7-fix")).toBe("https://github.com/o/r/compare/main...agent/7-fix?expand=1");
    expect(compareUrl("https://ghe.example.com/", "o/r", "release/1.x", "agent/7-a#b")).toBe("https://ghe.example.com/o/r/compare/release/1.x...agent/7-a%23b?expand=1");
  });

  it("a branch with parentheses and backticks stays inside the link's target, and the names stay code", () => {
    const branch = "ag`ent)(/7-x) [y](https://evil.example)";
    const url = compareUrl("https://github.com", "o/r", "main", branch);
    expect(url).not.toMatch(/[()]/);
    // The sentence delivery writes, parsed as GitHub parses it.
    const md = `[Open the pull request](${url}) from ${codeName(branch)} into ${codeName("main")}.`;
    const links = nodes(md, "link");
    expect(links).toHaveLength(1);
    expect(decodeURIComponent(links[0]!.url)).toBe(`https://github.com/o/r/compare/main...${branch}?expand=1`);
    expect(nodes(md, "inlineCode").map((n) => n.value)).toEqual([branch, "main"]);
  });

  it("a branch prefix with backticks is one code span in a ruleset refusal", () => {
    const r = pushRefusal("GH013: Repository rule violations found", { own: true, branchPrefix: "a`b` [x](https://evil.example) `" });
    const code = nodes(r!.explanation, "inlineCode").map((n) => n.value);
    expect(code).toContain("a`b` [x](https://evil.example) `**");
    expect(nodes(r!.explanation, "link")).toEqual([]);
  });
});

/** The nodes of one type in Markdown as GitHub (GFM) parses it. */
function nodes<T extends Nodes["type"]>(markdown: string, type: T): Array<Extract<Nodes, { type: T }>> {
  const found: Array<Extract<Nodes, { type: T }>> = [];
  const visit = (n: Nodes): void => {
    if (n.type === type) found.push(n as Extract<Nodes, { type: T }>);
    if ("children" in n) for (const c of n.children) visit(c);
  };
  visit(fromMarkdown(markdown, { extensions: [gfm()], mdastExtensions: [gfmFromMarkdown()] }));
  return found;
}
