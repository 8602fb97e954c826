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
