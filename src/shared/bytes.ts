/** Byte sizes as messages spell them. */

export const GiB = 1024 ** 3;

/** `2 GiB`, `512 MiB`, `300 bytes`: how limits and sizes appear in messages. */
export function describeBytes(n: number): string {
  if (n >= GiB) return `${(n / GiB).toFixed(1).replace(/\.0$/, "")} GiB`;
  if (n >= 1024 ** 2) return `${Math.round(n / 1024 ** 2)} MiB`;
  return `${n} bytes`;
}
