// Extracts gitleaks' per-rule true and false samples (the `tps` and `fps`
// each rule is validated with in cmd/generate/config/rules/*.go, MIT) into
// test/fixtures/gitleaks-corpus.json, read from a git clone of
// https://github.com/gitleaks/gitleaks:
//
//   node scripts/gitleaks-corpus.mjs --git /path/to/gitleaks[.git] [--ref <commit>]
//
// The samples are Go expressions. A small evaluator reads the ones the rule
// files use: string literals and `+`, []string{…} and map literals, append,
// fmt.Sprintf, utils.GenerateSampleSecret(s), the utils.AlphaNumeric-style
// class helpers, base64 encoders, and secrets.NewSecret(regex), which
// gitleaks fills at random: here a seeded generator fills it, so the corpus
// is the same on every run. A sample that needs NewSecret is marked
// `generated`; the others are gitleaks' own literal text. Expressions the
// evaluator does not know are counted under `skipped` with the reason.
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const OUT = path.join(root, "test/fixtures/gitleaks-corpus.json");
const args = process.argv.slice(2);
const opt = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
if (!opt("--git")) throw new Error("usage: node scripts/gitleaks-corpus.mjs --git <gitleaks clone> [--ref <commit>]");
const gitDir = (() => {
  try {
    return execFileSync("git", ["-C", opt("--git"), "rev-parse", "--absolute-git-dir"], { encoding: "utf8" }).trim();
  } catch {
    return opt("--git");
  }
})();
const git = (...a) => execFileSync("git", ["--git-dir", gitDir, ...a], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
const commit = git("rev-parse", `${opt("--ref") ?? "HEAD"}^{commit}`).trim();
const version = git("describe", "--tags", commit).trim();
const show = (file) => git("show", `${commit}:${file}`);

// ---------------------------------------------------------------- tokens

function tokenize(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
    } else if (src.startsWith("//", i)) {
      i = src.indexOf("\n", i);
      if (i < 0) i = src.length;
    } else if (src.startsWith("/*", i)) {
      i = src.indexOf("*/", i) + 2;
    } else if (c === "`") {
      const end = src.indexOf("`", i + 1);
      out.push({ t: "str", v: src.slice(i + 1, end).replace(/\r/g, "") });
      i = end + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      out.push({ t: "str", v: unquote(src.slice(i + 1, j)) });
      i = j + 1;
    } else if (c === "'") {
      let j = i + 1;
      while (src[j] !== "'") j += src[j] === "\\" ? 2 : 1;
      out.push({ t: "rune", v: unquote(src.slice(i + 1, j)) });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i));
      out.push({ t: "id", v: m[0] });
      i += m[0].length;
    } else if (/[0-9]/.test(c)) {
      const m = /^[0-9][0-9a-fA-Fx._]*/.exec(src.slice(i));
      out.push({ t: "num", v: m[0] });
      i += m[0].length;
    } else {
      const m = /^(?:\.\.\.|:=|==|!=|<=|>=|&&|\|\||\+\+|--|\+=|-=|<-|.)/s.exec(src.slice(i));
      out.push({ t: "p", v: m[0] });
      i += m[0].length;
    }
  }
  return out;
}

const ESC = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'", a: "\x07", b: "\b", f: "\f", v: "\v" };
function unquote(s) {
  return s.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3}|.)/g, (_, e) => {
    if (e[0] === "x") return String.fromCharCode(parseInt(e.slice(1), 16));
    if (e[0] === "u" || e[0] === "U") return String.fromCodePoint(parseInt(e.slice(1), 16));
    if (/^[0-7]{3}$/.test(e)) return String.fromCharCode(parseInt(e, 8));
    if (!(e in ESC)) throw new Error(`unknown escape \\${e}`);
    return ESC[e];
  });
}

// ---------------------------------------------------------------- random fill (reggen, seeded)

let seed = 0x9e3779b9;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (s) => s[Math.floor(random() * s.length)];
const between = (a, b) => a + Math.floor(random() * (b - a + 1));
const PRINTABLE = Array.from({ length: 95 }, (_, k) => String.fromCharCode(32 + k)).join("");
const CLASS_ESC = { w: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", d: "0123456789", s: " ", S: PRINTABLE.replace(" ", "") };

/** One string the regex matches: reggen's Generate(1) (a repetition without bound repeats at most once more). */
function generate(regex) {
  let i = 0;
  const alt = () => {
    const branches = [[]];
    while (i < regex.length && regex[i] !== ")") {
      if (regex[i] === "|") {
        i++;
        branches.push([]);
      } else branches[branches.length - 1].push(quantified());
    }
    return () => pick(branches).map((f) => f()).join("");
  };
  const quantified = () => {
    const a = atom();
    const q = /^(?:\{(\d+)(?:(,)(\d*))?\}|([*+?]))\??/.exec(regex.slice(i));
    if (!q) return a;
    i += q[0].length;
    let lo;
    let hi;
    if (q[4]) [lo, hi] = { "*": [0, 1], "+": [1, 2], "?": [0, 1] }[q[4]];
    else {
      lo = Number(q[1]);
      hi = q[2] ? (q[3] ? Number(q[3]) : lo + 1) : lo;
    }
    return () => Array.from({ length: between(lo, hi) }, a).join("");
  };
  const atom = () => {
    const c = regex[i];
    if (c === "(") {
      i++;
      const flags = /^\?(?:[a-z]*:|P?<\w+>)?/.exec(regex.slice(i));
      if (flags) i += flags[0].length;
      const inner = alt();
      i++;
      return inner;
    }
    if (c === "[") return charClass();
    if (c === "\\") {
      const e = regex[i + 1];
      i += 2;
      if (e in CLASS_ESC) return () => pick(CLASS_ESC[e]);
      return () => e;
    }
    if (c === "^" || c === "$") {
      i++;
      return () => "";
    }
    i++;
    if (c === ".") return () => pick(CLASS_ESC.w);
    return () => c;
  };
  const charClass = () => {
    i++;
    const negate = regex[i] === "^";
    if (negate) i++;
    let chars = "";
    let first = true;
    while (regex[i] !== "]" || first) {
      first = false;
      let c = regex[i++];
      if (c === "\\") {
        const e = regex[i++];
        if (e in CLASS_ESC) {
          chars += CLASS_ESC[e];
          continue;
        }
        c = e;
      }
      if (regex[i] === "-" && regex[i + 1] !== "]") {
        let to = regex[i + 1];
        i += 2;
        if (to === "\\") to = regex[i++];
        for (let k = c.charCodeAt(0); k <= to.charCodeAt(0); k++) chars += String.fromCharCode(k);
      } else chars += c;
    }
    i++;
    const set = negate ? [...PRINTABLE].filter((ch) => !chars.includes(ch)).join("") : chars;
    return () => pick(set);
  };
  const f = alt();
  if (i !== regex.length) throw new Error(`cannot generate from ${regex}`);
  return f();
}

// ---------------------------------------------------------------- values

/** A sample: its text, and whether a random fill is part of it. */
const S = (s, gen = false) => ({ s, gen });
const str = (v) => {
  if (!v || typeof v.s !== "string") throw new Error("not a string");
  return v;
};
const list = (v) => {
  if (!Array.isArray(v)) throw new Error("not a list");
  return v;
};

let templateCache;
const templates = () => (templateCache ??= (() => {
  const toks = tokenize(show("cmd/generate/config/utils/generate.go"));
  const at = toks.findIndex((t, k) => t.v === "samples" && toks[k + 1].v === ":=");
  return new Parser(toks, at + 2, {}).expr().map;
})());

function sampleSecrets(identifier, secret) {
  return templates().map(({ value }) =>
    S(
      value.s.replaceAll("{i}", identifier.s).replaceAll("{I}", identifier.s.toUpperCase()).replaceAll("{s}", secret.s),
      identifier.gen || secret.gen,
    ),
  );
}

const CLASSES = {
  Numeric: (n) => `[0-9]{${n}}`,
  Hex: (n) => `[a-f0-9]{${n}}`,
  AlphaNumeric: (n) => `[a-z0-9]{${n}}`,
  AlphaNumericExtendedShort: (n) => `[a-z0-9_-]{${n}}`,
  AlphaNumericExtended: (n) => `[a-z0-9=_\\-]{${n}}`,
  AlphaNumericExtendedLong: (n) => `[a-z0-9\\/=_\\+\\-]{${n}}`,
};

const B64 = {
  StdEncoding: (b) => b.toString("base64"),
  RawStdEncoding: (b) => b.toString("base64").replace(/=+$/, ""),
  URLEncoding: (b) => b.toString("base64").replace(/\+/g, "-").replace(/\//g, "_"),
  RawURLEncoding: (b) => b.toString("base64url"),
};

function sprintf(format, args) {
  let k = 0;
  return format.replace(/%[sdvq%]/g, (m) => (m === "%%" ? "%" : m === "%q" ? JSON.stringify(args[k++]) : String(args[k++])));
}

function call(name, a) {
  const m = /^utils\.(\w+)$/.exec(name);
  if (m && m[1] in CLASSES) return S(CLASSES[m[1]](str(a[0]).s), a[0].gen);
  if (name === "utils.Hex8_4_4_4_12") return S(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`);
  if (name === "utils.GenerateSampleSecret") return S(`${str(a[0]).s}_api_token = "${str(a[1]).s}"`, a[0].gen || a[1].gen);
  if (name === "utils.GenerateSampleSecrets") return sampleSecrets(str(a[0]), str(a[1]));
  if (name === "secrets.NewSecret") return S(generate(str(a[0]).s), true);
  if (name === "newPlausibleSecret") {
    for (;;) {
      const s = generate(str(a[0]).s);
      if (/[1-9]/.test(s) && !stopwords.some((w) => s.toLowerCase().includes(w))) return S(s, true);
    }
  }
  if (name === "fmt.Sprintf") return S(sprintf(str(a[0]).s, a.slice(1).map((v) => (typeof v === "number" ? v : str(v).s))), a.some((v) => v.gen));
  if (name === "strings.Repeat") return S(str(a[0]).s.repeat(a[1]), a[0].gen);
  if (name === "strings.ToUpper") return S(str(a[0]).s.toUpperCase(), a[0].gen);
  if (name === "strings.ToLower") return S(str(a[0]).s.toLowerCase(), a[0].gen);
  if (name === "string" || name === "[]byte") return a[0];
  const enc = /^(?:b64|base64)\.(\w+)\.EncodeToString$/.exec(name);
  if (enc && enc[1] in B64) return S(B64[enc[1]](Buffer.from(str(a[0]).s, "latin1")), a[0].gen);
  if (name === "append") {
    const out = [...list(a[0] ?? [])];
    for (const v of a.slice(1)) out.push(...(Array.isArray(v) ? v : [str(v)]));
    return out;
  }
  if (name === "generateTestValues") return jwtValues();
  throw new Error(`unknown call ${name}`);
}

class Parser {
  constructor(toks, at, env) {
    this.toks = toks;
    this.i = at;
    this.env = env;
  }
  peek(k = 0) {
    return this.toks[this.i + k];
  }
  eat(v) {
    const t = this.toks[this.i++];
    if (v !== undefined && t?.v !== v) throw new Error(`expected ${v}, got ${t?.v}`);
    return t;
  }
  expr() {
    let v = this.unary();
    while (this.peek()?.v === "+") {
      this.eat("+");
      const r = this.unary();
      if (typeof v === "number") v += r;
      else v = S(str(v).s + str(r).s, v.gen || r.gen);
    }
    return v;
  }
  unary() {
    const t = this.peek();
    if (t.t === "str") {
      this.i++;
      return S(t.v);
    }
    if (t.t === "num") {
      this.i++;
      return Number(t.v);
    }
    if (t.v === "(") {
      this.eat("(");
      const v = this.expr();
      this.eat(")");
      return v;
    }
    if (t.v === "[") {
      this.eat("[");
      this.eat("]");
      const type = this.eat().v;
      if (this.peek().v === "(") return this.callArgs(`[]${type}`);
      return this.sliceLiteral();
    }
    if (t.v === "map") return this.mapLiteral();
    if (t.t === "id") {
      let name = this.eat().v;
      while (this.peek()?.v === "." && this.peek(1)?.t === "id") {
        this.eat(".");
        name += `.${this.eat().v}`;
      }
      if (this.peek()?.v === "(") return this.callArgs(name);
      if (name === "nil") return [];
      if (name in this.env) {
        const v = this.env[name];
        if (v instanceof Error) throw v;
        return v;
      }
      throw new Error(`unknown name ${name}`);
    }
    throw new Error(`unexpected ${t.v}`);
  }
  callArgs(name) {
    this.eat("(");
    const a = [];
    while (this.peek().v !== ")") {
      a.push(this.expr());
      if (this.peek().v === "...") this.eat("...");
      if (this.peek().v === ",") this.eat(",");
    }
    this.eat(")");
    return call(name, a);
  }
  sliceLiteral() {
    this.eat("{");
    const out = [];
    while (this.peek().v !== "}") {
      const start = this.i;
      try {
        out.push(str(this.expr()));
      } catch (e) {
        // One sample the evaluator cannot read: skip to the next element, count it.
        this.i = start;
        this.skipElement();
        out.push({ skipped: e.message });
      }
      if (this.peek().v === ",") this.eat(",");
    }
    this.eat("}");
    return out;
  }
  skipElement() {
    let depth = 0;
    for (;;) {
      const v = this.peek().v;
      if (depth === 0 && (v === "," || v === "}")) return;
      if (v === "(" || v === "{" || v === "[") depth++;
      if (v === ")" || v === "}" || v === "]") depth--;
      this.i++;
    }
  }
  mapLiteral() {
    this.eat("map");
    this.eat("[");
    this.eat();
    this.eat("]");
    if (this.peek().v === "[") {
      this.eat("[");
      this.eat("]");
    }
    this.eat();
    this.eat("{");
    const map = [];
    while (this.peek().v !== "}") {
      const key = str(this.expr());
      this.eat(":");
      const value = this.peek().v === "{" ? this.sliceLiteral() : this.expr();
      map.push({ key: key.s, value });
      if (this.peek().v === ",") this.eat(",");
    }
    this.eat("}");
    return { map };
  }
}

/** jwt.go's generateTestValues: each known JOSE header over RFC 7519's sample, in four base64 alphabets. */
function jwtValues() {
  const toks = tokenize(show("cmd/generate/config/rules/jwt.go"));
  const env = {};
  for (const name of ["jwtSuffix", "headers"]) {
    const at = toks.findIndex((t, k) => t.v === name && toks[k + 1].v === ":=");
    env[name] = new Parser(toks, at + 2, env).expr();
  }
  const out = [];
  for (const { key, value } of env.headers.map) {
    for (const v of value) {
      const jwt = Buffer.from(Buffer.from(`{"${key}":${v.s}}`).toString("base64url") + env.jwtSuffix.s);
      for (const enc of Object.values(B64)) out.push(S(enc(jwt)));
    }
  }
  return out;
}

// ---------------------------------------------------------------- rule files

const stopwords = (() => {
  const toks = tokenize(show("cmd/generate/config/rules/stopwords.go"));
  const at = toks.findIndex((t, k) => t.v === "DefaultStopWords" && toks[k + 1].v === "=");
  return new Parser(toks, at + 2, {}).expr().map((v) => v.s.toLowerCase());
})();

/** Top-level functions of a Go file: name and token range of the body. */
function functions(toks) {
  const out = [];
  for (let k = 0; k < toks.length; k++) {
    if (toks[k].v !== "func" || toks[k + 1].t !== "id") continue;
    let j = k;
    while (toks[j].v !== "{") j++;
    let depth = 0;
    let end = j;
    for (; end < toks.length; end++) {
      if (toks[end].v === "{") depth++;
      if (toks[end].v === "}" && --depth === 0) break;
    }
    out.push({ name: toks[k + 1].v, start: j + 1, end });
    k = end;
  }
  return out;
}

/** Package-level `var x = …` values, for rules that share samples. */
function fileEnv(toks, fns) {
  const env = {};
  const inside = (k) => fns.some((f) => k >= f.start && k < f.end);
  for (let k = 0; k < toks.length; k++) {
    if (inside(k) || toks[k].v !== "var" || toks[k + 1].t !== "id") continue;
    let at = k + 2;
    while (toks[at].v !== "=" && at < k + 8) at++;
    if (toks[at].v !== "=") continue;
    try {
      env[toks[k + 1].v] = new Parser(toks, at + 1, env).expr();
    } catch (e) {
      env[toks[k + 1].v] = e;
    }
  }
  return env;
}

const corpus = [];
const skipped = [];
/** Rules the default config holds: a rule file may define one that main.go does not register. */
const configured = new Set([...show("config/gitleaks.toml").matchAll(/^id = "([^"]+)"/gm)].map((m) => m[1]));
const files = git("ls-tree", "--name-only", commit, "cmd/generate/config/rules/").split("\n").filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"));
for (const file of files) {
  const toks = tokenize(show(file));
  const fns = functions(toks);
  const shared = fileEnv(toks, fns);
  for (const fn of fns) {
    const body = toks.slice(fn.start, fn.end);
    const id = body.findIndex((t, k) => t.v === "RuleID" && body[k + 1].v === ":");
    if (id < 0) continue;
    const ruleId = body[id + 2].v;
    if (!configured.has(ruleId)) {
      skipped.push({ rule: ruleId, kind: "tp", reason: "not a rule of the default config (config/gitleaks.toml)" });
      continue;
    }
    const env = { ...shared };
    let validated = false;
    for (let k = 0; k < body.length; k++) {
      const t = body[k];
      const assign = t.t === "id" && (body[k + 1]?.v === ":=" || body[k + 1]?.v === "=") && body[k - 1]?.v !== "." && body[k - 1]?.v !== ",";
      const isVar = t.v === "var" && body[k + 1]?.t === "id";
      if (assign || isVar) {
        const name = isVar ? body[k + 1].v : t.v;
        let at = isVar ? k + 2 : k + 2;
        if (isVar) {
          while (body[at] && body[at].v !== "=" && at < k + 6) at++;
          at++;
        }
        try {
          env[name] = new Parser(body, at, env).expr();
        } catch (e) {
          env[name] = e;
        }
        continue;
      }
      if (t.v === "utils" && body[k + 2]?.v?.startsWith("Validate")) {
        validated = true;
        const withPaths = body[k + 2].v === "ValidateWithPaths";
        const [tpName, fpName] = [body[k + 6].v, body[k + 8].v];
        for (const [kind, name] of [["tp", tpName], ["fp", fpName]]) {
          if (name === "nil") continue;
          const value = env[name];
          if (value === undefined || value instanceof Error) {
            skipped.push({ rule: ruleId, kind, reason: value?.message ?? `no ${name}` });
            continue;
          }
          const items = withPaths ? value.map.map(({ key, value: v }) => ({ ...v, path: key })) : value;
          for (const item of items) {
            if (item.skipped) skipped.push({ rule: ruleId, kind, reason: item.skipped });
            else corpus.push({ rule: ruleId, kind, ...(item.gen ? { generated: true } : {}), ...(item.path ? { path: item.path } : {}), text: item.s });
          }
        }
      }
    }
    if (!validated) skipped.push({ rule: ruleId, kind: "tp", reason: "no utils.Validate call" });
  }
}

const count = (f) => corpus.filter(f).length;
const data = {
  source: {
    repository: "https://github.com/gitleaks/gitleaks",
    files: "cmd/generate/config/rules/*.go",
    commit,
    version,
    licence: "MIT",
    licenceText: show("LICENSE"),
    generatedBy: "scripts/gitleaks-corpus.mjs",
  },
  counts: {
    truePositives: count((s) => s.kind === "tp"),
    literalTruePositives: count((s) => s.kind === "tp" && !s.generated),
    falsePositives: count((s) => s.kind === "fp"),
    literalFalsePositives: count((s) => s.kind === "fp" && !s.generated),
    skipped: skipped.length,
  },
  skipped,
  samples: corpus,
};
writeFileSync(OUT, JSON.stringify(data, null, 1) + "\n");
console.log(`gitleaks ${version} (${commit}):`, JSON.stringify(data.counts));
for (const s of skipped) console.log(`  skipped ${s.rule} ${s.kind}: ${s.reason}`);
