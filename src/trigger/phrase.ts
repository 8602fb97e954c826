/**
 * Does a comment ask for the agent? Either it starts with `/agent`, or it
 * contains the trigger phrase as a whole word (`@agent` matches in
 * "hey @agent, fix it" but not in "me@agent.io" or "@agents"). The request is
 * the text after the trigger. Matching runs on sanitized text, so a phrase
 * hidden in an HTML comment or split by invisible characters does not count.
 */
import { escapeRegExp } from "../text.js";

export const SLASH_COMMAND = "/agent";

export interface PhraseMatch {
  /** Text after the trigger, trimmed (may be empty). */
  after: string;
  /** The whole text with the trigger removed, trimmed: the request when nothing follows the phrase. */
  without: string;
}


/** Characters that continue a GitHub login or word: a phrase followed or preceded by one is part of something else. */
const WORD = "[\\p{L}\\p{N}_-]";

export function matchTrigger(text: string, phrase: string): PhraseMatch | undefined {
  const slash = new RegExp(`^\\s*${escapeRegExp(SLASH_COMMAND)}(?!${WORD})`, "iu").exec(text);
  if (slash) {
    const after = text.slice(slash[0].length).trim();
    return { after, without: after };
  }
  const p = phrase.trim();
  if (!p) return undefined;
  // Before the phrase: start or a character that cannot be part of a login/email/path.
  const re = new RegExp(`(^|[^\\p{L}\\p{N}_.@/-])${escapeRegExp(p)}(?!${WORD})`, "iu");
  const m = re.exec(text);
  if (!m) return undefined;
  const start = m.index + m[1]!.length;
  const end = start + p.length;
  const after = text.slice(end).replace(/^[\s,:;.!?)\]-]+/, "").trim();
  const without = `${text.slice(0, start)} ${text.slice(end)}`.replace(/[ \t]+/g, " ").replace(/^[\s,:;.!?-]+/, "").trim();
  return { after, without };
}
