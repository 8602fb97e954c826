/**
 * The one logging interface every module receives. The action wires it to
 * @actions/core; the CLI to the console; tests to a recorder.
 */
export interface Logger {
  debug(message: string): void;
  info(message: string): void;
  warning(message: string): void;
  error(message: string): void;
  /** A notice annotation (the action: core.notice); loggers without one log it as info. */
  notice?(message: string): void;
  /** Run `fn` inside a collapsible group in the Actions log. */
  group<T>(title: string, fn: () => Promise<T>): Promise<T>;
}

export function consoleLogger(opts: { verbose?: boolean; stream?: NodeJS.WritableStream } = {}): Logger {
  const out = opts.stream ?? process.stderr;
  const write = (s: string) => out.write(s + "\n");
  return {
    debug: (m) => { if (opts.verbose) write(`  ${m}`); },
    info: (m) => write(m),
    warning: (m) => write(`warning: ${m}`),
    error: (m) => write(`error: ${m}`),
    notice: (m) => write(`notice: ${m}`),
    group: async (title, fn) => {
      write(`▸ ${title}`);
      return fn();
    },
  };
}

/** Wrap a logger so every line first passes through `filter` (used for redaction). */
export function filteredLogger(inner: Logger, filter: (s: string) => string): Logger {
  return {
    debug: (m) => inner.debug(filter(m)),
    info: (m) => inner.info(filter(m)),
    warning: (m) => inner.warning(filter(m)),
    error: (m) => inner.error(filter(m)),
    notice: (m) => (inner.notice ? inner.notice(filter(m)) : inner.info(filter(m))),
    group: (title, fn) => inner.group(filter(title), fn),
  };
}
