/**
 * Errors the user can fix (bad inputs, missing tools, refused patches) are
 * ConfigurationErrors: reported as one clear message, no stack trace.
 * Everything else is a bug in Agent Runner and is reported with its stack.
 */
export class ConfigurationError extends Error {
  override name = "ConfigurationError";
  /** One entry per problem, each naming the input and what is allowed. */
  readonly problems: string[];
  constructor(problems: string | string[]) {
    const list = Array.isArray(problems) ? problems : [problems];
    super(
      list.length === 1
        ? list[0]!
        : `${list.length} problems with the inputs:\n${list.map((p) => `  - ${p}`).join("\n")}`,
    );
    this.problems = list;
  }
}

/** A subprocess that failed: carries what is needed to understand why. */
export class ExecError extends Error {
  override name = "ExecError";
  constructor(
    readonly command: string,
    readonly exitCode: number | null,
    readonly stderrTail: string,
  ) {
    super(`'${command}' exited with ${exitCode ?? "a signal"}${stderrTail ? `: ${stderrTail.trim()}` : ""}`);
  }
}

export function isConfigurationError(e: unknown): e is ConfigurationError {
  return e instanceof ConfigurationError;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
