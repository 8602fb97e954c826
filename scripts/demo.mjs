// npm run demo: the key-free demo (scripts/demo/demo.ts), run with Node's own
// type stripping. No key, no network: everything is on 127.0.0.1.
import "./ts-hooks.mjs";

await import("./demo/demo.ts");
