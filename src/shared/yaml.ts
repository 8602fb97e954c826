/**
 * YAML text to data, with the parser loaded on first use: a step whose inputs hold no YAML and
 * that has no config file never loads it (112 KB of the start-up bundle).
 */
import type * as Yaml from "yaml";

let yaml: typeof Yaml | undefined;

export function parseYaml(text: string): unknown {
  // require(), not import: esbuild bundles it as a module evaluated at this call, not at start-up
  // (in dist/ `require` is the banner's; under vitest, the module runner's).
  yaml ??= require("yaml") as typeof Yaml;
  return yaml.parse(text);
}
