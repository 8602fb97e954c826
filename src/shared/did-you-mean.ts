/**
 * "Did you mean …?" for a misspelled flag or config key. No dependency offers
 * this at a size worth its lockfile entry (fastest-levenshtein and leven are
 * not in the tree), so it is the optimal-string-alignment distance in a dozen
 * lines: Levenshtein plus a swap of two neighbours, the commonest typo
 * (`--promtp`).
 */

/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/**
 * The known name closest to `given`, when it is close enough to be a typo: at
 * most a third of its length in edits (at least 1, at most 3), case ignored.
 * A name that contains the given word or starts the same way (`--model-price`
 * for `model-prices`) counts as close too. Ties go to the first known name.
 */
export function closestName(given: string, known: readonly string[]): string | undefined {
  const g = given.toLowerCase();
  if (!g) return undefined;
  const limit = Math.min(3, Math.max(1, Math.floor(g.length / 3)));
  let best: { name: string; d: number } | undefined;
  for (const name of known) {
    const d = editDistance(g, name.toLowerCase());
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
