/** The problems a ConfigurationError lists, for tests of the input parser. */
import { ConfigurationError } from "../../src/errors.js";

/** The problems `parse()` throws as a ConfigurationError; none when it parses; any other error is thrown on. */
export function configProblems(parse: () => unknown): string[] {
  try {
    parse();
  } catch (e) {
    if (e instanceof ConfigurationError) return e.problems;
    throw e;
  }
  return [];
}
