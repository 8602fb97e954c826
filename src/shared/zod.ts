/**
 * The one door to zod for host code: `zod/mini`, the tree-shakable build of the
 * same core. Classic zod attaches every method to every schema, so a bundle that
 * imports it carries all of zod and pays ~70 ms of start-up on every step
 * (issue #22); mini carries only the schemas and checks a file names.
 *
 * Mini ships no error messages of its own ("Invalid input"), so the English
 * locale is set here, once, before any schema parses: the messages users read in
 * a ConfigurationError stay the ones classic zod writes.
 */
import * as z from "zod/mini";

z.config(z.locales.en());

export { z };
