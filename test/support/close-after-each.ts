/** Closing what a test started, after each test of a file. */
import { afterEach } from "vitest";

interface Closable {
  close(): Promise<void>;
}

/**
 * After each test, closes what each getter returns (in order), each thing once: a file's `let s` and `let results`
 * that its tests assign; a test that started none leaves nothing to close.
 */
export function closeAfterEach(...open: Array<() => Closable | undefined>): void {
  const closed = new WeakSet<Closable>();
  afterEach(async () => {
    for (const get of open) {
      const x = get();
      if (!x || closed.has(x)) continue;
      closed.add(x);
      await x.close();
    }
  });
}
