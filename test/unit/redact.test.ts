import { describe, expect, it } from "vitest";
import { Redactor } from "../../src/shared/redact.js";

describe("redactor", () => {
  const secret = 'p@ss/word+"quoted"\\and=more';
  const r = new Redactor([secret]);

  it("replaces the value and its JSON-escaped and URL-encoded forms", () => {
    expect(r.redact(`x ${secret} y`)).toBe("x *** y");
    expect(r.redact(JSON.stringify({ v: secret }))).toBe('{"v":"***"}');
    expect(r.redact(`?q=${encodeURIComponent(secret)}&z`)).toBe("?q=***&z");
  });

  it("finds base64 of the secret inside longer base64 at every alignment", () => {
    for (const prefix of ["", "a", "ab", "abc"]) {
      const encoded = Buffer.from(`${prefix}${secret}tail`).toString("base64");
      expect(r.redact(encoded)).toContain("***");
    }
  });

  it("redacts recognizable tokens even when not declared", () => {
    const none = new Redactor([]);
    expect(none.redact("ghp_" + "a".repeat(36))).toBe("***");
    expect(none.redact("Authorization: Bearer abcdefghijklmnopqrstuvwxyz")).toBe("Authorization: Bearer ***");
    expect(none.redact("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U")).toBe("***");
    expect(none.redact("plain text stays")).toBe("plain text stays");
  });

  it("ignores values too short to redact safely", () => {
    expect(new Redactor(["ab"]).redact("abc")).toBe("abc");
  });

  it("deep-redacts JSON values", () => {
    expect(r.redactValue({ a: [secret], b: { c: `x${secret}` } })).toEqual({ a: ["***"], b: { c: "x***" } });
  });
});

describe("redactor's one-scan check", () => {
  // redact() first asks one combined pattern whether anything could match; these are the
  // cases where a case-insensitive or multi-pattern match must still get through it.
  const none = new Redactor([]);

  it("finds the scheme words in any case, as the case-insensitive pattern does", () => {
    const cred = "abcdefghijklmnopqrstuvwxyz";
    for (const scheme of ["Bearer", "BEARER", "bEaReR", "token", "TOKEN", "Token", "basic", "BASIC"])
      expect(none.redact(`Authorization: ${scheme}\t${cred}`)).toBe(`Authorization: ${scheme} ***`);
    // Short credentials and non-ASCII look-alikes stay as they were, as before.
    expect(none.redact("Bearer short")).toBe("Bearer short");
    expect(none.redact(`ToKen\u212a ${cred}`)).toBe(`ToKen\u212a ${cred}`);
  });

  it("redacts every kind of token and every secret form in one long text", () => {
    const secret = "s3cr3t-value-42";
    const r = new Redactor([secret]);
    const filler = "lorem ipsum ".repeat(5000);
    const text = [
      filler,
      "ghp_" + "a".repeat(36),
      "github_pat_" + "b".repeat(40),
      "sk-ant-" + "c".repeat(30),
      "sk-proj-" + "d".repeat(40),
      "AIza" + "e".repeat(35),
      encodeURIComponent(secret),
      Buffer.from(`xx${secret}yy`).toString("base64"),
      secret,
      filler,
    ].join("\n");
    const out = r.redact(text);
    for (const leak of ["ghp_a", "github_pat_b", "sk-ant-c", "sk-proj-d", "AIzae", secret, Buffer.from(secret).toString("base64").slice(4, 12)])
      expect(out).not.toContain(leak);
    expect(out.split("***").length - 1).toBeGreaterThanOrEqual(8);
  });

  it("gives back the very same string when nothing matches", () => {
    const text = "plain ".repeat(10000);
    expect(new Redactor(["s3cr3t-value-42"]).redact(text)).toBe(text);
  });
});

describe("the model gateway's stand-in key", () => {
  it("is no token to redact (it is worth nothing, and an agent that copies its environment into a file must not be held for it); a real token beside it still is", () => {
    const r = new Redactor([]);
    const placeholder = "sk-ant-api03-agent-runner-7e97b6b3610f4e4edd2ee3c67780ac1f-placeholder-not-a-key";
    const env = `ANTHROPIC_CUSTOM_HEADERS=Authorization: Bearer ${placeholder}\nOPENAI_API_KEY=sk-agent-runner-placeholder-not-a-key\n`;
    expect(r.redact(env)).toBe(env);
    const real = "Authorization: Bearer sk-ant-api03-realKeyRealKeyRealKeyRealKey0123";
    expect(r.redact(real)).not.toContain("realKey");
  });
});
