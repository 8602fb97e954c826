// Regenerates src/publish/threats/gitleaks-rules.json from gitleaks' default
// rule set (config/gitleaks.toml, MIT), read from a git clone of
// https://github.com/gitleaks/gitleaks so that the commit it came from is
// recorded with the rules:
//
//   node scripts/gitleaks-rules.mjs --git /path/to/gitleaks[.git] [--ref <commit or tag>]
//
// Go's RE2 syntax becomes JavaScript's here, once, so the action only compiles
// the patterns: inline flags ((?i), (?i:…), (?-i:…), (?s:…)) are folded into the
// pattern (a letter under (?i) becomes [aA]), POSIX classes are spelled out,
// \z is $, (?P<n> is (?<n>, and `.` is [^\n] (RE2's dot). A rule that does not
// compile afterwards is listed under `dropped` with the reason.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "smol-toml";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(root, "src/publish/threats/gitleaks-rules.json");

const args = process.argv.slice(2);
const opt = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const gitDir = opt("--git");
if (!gitDir) throw new Error("usage: node scripts/gitleaks-rules.mjs --git <gitleaks clone> [--ref <commit>]");
const git = (...a) => execFileSync("git", ["--git-dir", resolveGitDir(gitDir), ...a], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const commit = git("rev-parse", `${opt("--ref") ?? "HEAD"}^{commit}`).trim();
const version = git("describe", "--tags", commit).trim();
const toml = parse(git("show", `${commit}:config/gitleaks.toml`));
const licence = git("show", `${commit}:LICENSE`);

function resolveGitDir(dir) {
  try {
    return execFileSync("git", ["-C", dir, "rev-parse", "--absolute-git-dir"], { encoding: "utf8" }).trim();
  } catch {
    return dir;
  }
}

const POSIX = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  digit: "0-9",
  lower: "a-z",
  upper: "A-Z",
  space: "\\t\\n\\v\\f\\r ",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f",
  punct: "!-\\/:-@\\[-`{-~",
};

/** RE2 → JavaScript: returns { source, flags }; throws on syntax it does not know. */
export function convertRe2(re2) {
  let out = "";
  let allInsensitive = false;
  let src = re2;
  // A pattern that is case-insensitive throughout keeps JavaScript's own `i` flag (faster, and shorter).
  if (src.startsWith("(?i)") && !/\(\?-i/.test(src.slice(4))) {
    allInsensitive = true;
    src = src.slice(4);
  }
  const stack = [{ ci: allInsensitive, dotAll: false }];
  const state = () => stack[stack.length - 1];
  const letter = (c) => (state().ci && !allInsensitive && /[a-z]/i.test(c) ? `[${c.toLowerCase()}${c.toUpperCase()}]` : c);
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    if (c === "\\") {
      const next = src[i + 1];
      i++;
      if (next === "z") out += "$";
      else if (next === "A") out += "^";
      else if (next === "Q" || next === "C" || next === "p" || next === "P") throw new Error(`unsupported escape \\${next}`);
      else out += `\\${next}`;
      continue;
    }
    if (c === "[") {
      const { text, end } = charClass(src, i, state().ci && !allInsensitive);
      out += text;
      i = end;
      continue;
    }
    if (c === "(") {
      const flags = /^\(\?([a-zA-Z-]+)([:)])/.exec(src.slice(i));
      if (flags) {
        const next = applyFlags(state(), flags[1]);
        if (flags[2] === ")") stack[stack.length - 1] = next;
        else {
          stack.push(next);
          out += "(?:";
        }
        i += flags[0].length - 1;
        continue;
      }
      stack.push({ ...state() });
      if (src.startsWith("(?P<", i)) {
        out += "(?<";
        i += 3;
      } else out += "(";
      continue;
    }
    if (c === ")") {
      stack.pop();
      if (!stack.length) throw new Error("unbalanced )");
      out += ")";
      continue;
    }
    if (c === ".") {
      out += state().dotAll ? "[^]" : "[^\\n]";
      continue;
    }
    if (c === "{") {
      // A quantifier's digits stay as they are; a literal brace too.
      const q = /^\{\d*(,\d*)?\}/.exec(src.slice(i));
      if (q) {
        out += q[0];
        i += q[0].length - 1;
        continue;
      }
    }
    out += letter(c);
  }
  if (stack.length !== 1) throw new Error("unbalanced (");
  const flags = allInsensitive ? "i" : "";
  new RegExp(out, flags);
  return { source: out, flags };
}

function applyFlags(current, spec) {
  const next = { ...current };
  let on = true;
  for (const f of spec) {
    if (f === "-") on = false;
    else if (f === "i") next.ci = on;
    else if (f === "s") next.dotAll = on;
    else throw new Error(`unsupported flag ${f}`);
  }
  return next;
}

/** A bracket expression from `[` at `start`; under (?i) each letter and letter range gains its other case. */
function charClass(src, start, ci) {
  let i = start + 1;
  let text = "[";
  if (src[i] === "^") {
    text += "^";
    i++;
  }
  let first = true;
  const items = [];
  for (; i < src.length; i++) {
    const c = src[i];
    if (c === "]" && !first) break;
    first = false;
    const posix = /^\[:(\^?)([a-z]+):\]/.exec(src.slice(i));
    if (posix) {
      if (posix[1] || !(posix[2] in POSIX)) throw new Error(`unsupported class ${posix[0]}`);
      items.push(POSIX[posix[2]]);
      i += posix[0].length - 1;
      continue;
    }
    if (c === "\\") {
      items.push(`\\${src[i + 1]}`);
      i++;
      continue;
    }
    if (c === "[") {
      items.push("\\[");
      continue;
    }
    const range = /^([a-zA-Z])-([a-zA-Z])/.exec(src.slice(i));
    if (range && ci) {
      items.push(`${range[1].toLowerCase()}-${range[2].toLowerCase()}`, `${range[1].toUpperCase()}-${range[2].toUpperCase()}`);
      i += 2;
      continue;
    }
    if (ci && /[a-zA-Z]/.test(c) && src[i + 1] !== "-") {
      items.push(c.toLowerCase() + c.toUpperCase());
      continue;
    }
    items.push(c);
  }
  if (src[i] !== "]") throw new Error("unterminated [");
  return { text: text + items.join("") + "]", end: i };
}

function convertList(list = []) {
  return list.map((r) => convertRe2(r));
}

function allowlist(a) {
  return {
    ...(a.description ? { description: a.description } : {}),
    condition: a.condition ?? "OR",
    target: a.regexTarget ?? "secret",
    regexes: convertList(a.regexes),
    stopwords: (a.stopwords ?? []).map((s) => s.toLowerCase()),
    // Kept for the record; the scanner does not allow by path (the agent picks the names).
    paths: a.paths ?? [],
  };
}

const rules = [];
const dropped = [];
for (const r of toml.rules) {
  try {
    if (r.required || r.skipReport) throw new Error("multi-part rule");
    rules.push({
      id: r.id,
      ...(r.regex !== undefined ? { regex: convertRe2(r.regex) } : {}),
      ...(r.path !== undefined ? { path: convertRe2(r.path) } : {}),
      ...(r.secretGroup ? { secretGroup: r.secretGroup } : {}),
      ...(r.entropy ? { entropy: r.entropy } : {}),
      keywords: [...new Set((r.keywords ?? []).map((k) => k.toLowerCase()))],
      allowlists: (r.allowlists ?? []).map(allowlist),
    });
  } catch (e) {
    dropped.push({ id: r.id, reason: e.message });
  }
}

const data = {
  source: {
    repository: "https://github.com/gitleaks/gitleaks",
    file: "config/gitleaks.toml",
    commit,
    version,
    licence: "MIT",
    licenceText: licence,
    generatedBy: "scripts/gitleaks-rules.mjs",
  },
  allowlist: allowlist(toml.allowlist ?? {}),
  rules,
  dropped,
};
writeFileSync(OUT, JSON.stringify(data, null, 1) + "\n");
console.log(`${rules.length} rules written to ${path.relative(root, OUT)} from gitleaks ${version} (${commit}); dropped: ${dropped.map((d) => `${d.id} (${d.reason})`).join(", ") || "none"}`);
