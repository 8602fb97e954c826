/**
 * The one door to zod for host code: `zod/mini`, the tree-shakable build of the
 * same core. Classic zod attaches every method to every schema, so a bundle that
 * imports it carries all of zod and pays ~70 ms of start-up on every step
 * (issue #22); mini carries only the schemas and checks a file names.
 *
 * Import it as `import * as z from "../shared/zod.js"`: esbuild keeps only the
 * members a namespace import reads. Re-exporting the namespace as a value
 * (`export { z }`, `export * as z`) would bring all of zod back, every locale
 * included.
 *
 * Mini ships no error messages of its own ("Invalid input"), so the English
 * locale is set here, once, before any schema parses: the messages users read in
 * a ConfigurationError stay the ones classic zod writes. Only `en` is imported:
 * `z.locales.en()` would bundle every language.
 */
import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

config(en());

export * from "zod/mini";
