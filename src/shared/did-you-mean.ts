/**
 * "Did you mean …?" for a misspelled flag or config key. No dependency offers
 * this at a size worth its lockfile entry (fastest-levenshtein and leven are
 * not in the tree), so it is the optimal-string-alignment distance in a dozen
 * lines: Levenshtein plus a swap of two neighbours, the commonest typo
 * (`--promtp`).
 */

/**
 * Longest name a suggestion is looked for: flags and config keys are short,
 * and a key of megabytes in a config file must not cost seconds of distance
 * tables (the table is one cell per pair of characters).
 */
export const MAX_SUGGESTED_NAME = 64;

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  // Three rows are all the recurrence reads (the swap looks two rows back): memory is b's length, not a's times b's.
  let before = Array<number>(b.length + 1).fill(0);
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i, ...Array<number>(b.length).fill(0)];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2]! + 1);
      row[j] = d;
    }
    [before, prev] = [prev, row];
  }
  return prev[b.length]!;
}

/**
 * The known name closest to `given`, when it is close enough to be a typo: at
 * most a third of its length in edits (at least 1, at most 3), case ignored.
 * A name that contains the given word or starts the same way (`--model-price`
 * for `model-prices`) counts as close too. Ties go to the first known name.
 * Names longer than `MAX_SUGGESTED_NAME` get no suggestion, and a known name
 * whose length alone differs by more than the limit is not measured.
 */
export function closestName(given: string, known: readonly string[]): string | undefined {
  if (given.length > MAX_SUGGESTED_NAME) return undefined;
  const g = given.toLowerCase();
  if (!g) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(g.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    // Each length of difference is at least one edit.
    const n = name.toLowerCase();
    if (Math.abs(n.length - g.length) > limit) continue;
    const d = editDistance(g, n);
    if (d <= limit && (!best || d < best.d)) best = { name, d };
  }
  if (best) return best.name;
  return g.length >= 4 ? known.find((name) => name.toLowerCase().startsWith(g)) : undefined;
}

/** ` Did you mean 'x'?`, or "" when nothing is close. `prefix`: how the name is written (`--`). */
export function didYouMean(given: string, known: readonly string[], prefix = ""): string {
  const name = closestName(given, known);
  return name ? ` Did you mean '${prefix}${name}'?` : "";
}
