/** Numbers and sort orders as messages and lists need them, without ICU (Intl), whose first use costs a step tens of milliseconds. */

/**
 * `12,345`: a whole number with its thousands grouped, as `toLocaleString("en-US")` writes it, without
 * the locale machinery: the first call of that loads ICU's number formatting (30 to 50 ms on a
 * 2-core runner), which a step would pay only to write its summary.
 */
export function groupDigits(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const whole = Math.round(n);
  const digits = BigInt(Math.abs(whole)).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return whole < 0 ? `-${digits}` : digits;
}

/**
 * Sort order of strings by UTF-16 code units: the same on every machine, and free of the ICU collator
 * that `localeCompare` loads on its first call (about 18 ms). For names and paths, where a stable order
 * matters and a language's order does not.
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
