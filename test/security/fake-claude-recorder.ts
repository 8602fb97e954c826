/**
 * A stand-in `claude` for attack tests: found on PATH with
 * `agent-version: preinstalled`, it runs the real pipeline (gateway, HOME,
 * config, session restore) and records what the agent was given: its stdin,
 * argv, the instructions file, the JSON schema, its skills and every file of
 * its HOME. It then prints a minimal stream-json session.
 */
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface FakeClaude {
  /** PATH holding only this `claude` ahead of the system's. */
  path: string;
  capture: string;
  /** A captured file's text, or undefined when the agent did not write it. */
  read(name: string): string | undefined;
  ran(): boolean;
}

export function fakeClaude(): FakeClaude {
  const bin = mkdtempSync(path.join(os.tmpdir(), "fake-claude-bin-"));
  const capture = mkdtempSync(path.join(os.tmpdir(), "fake-claude-capture-"));
  mkdirSync(bin, { recursive: true });
  writeFileSync(
    path.join(bin, "claude"),
    `#!/bin/bash
CAPTURE=${JSON.stringify(capture)}
cat > "$CAPTURE/prompt.txt"
printf '%s\\n' "$@" > "$CAPTURE/argv.txt"
prev=""
for a in "$@"; do
  [ "$prev" = "--append-system-prompt-file" ] && cp "$a" "$CAPTURE/instructions.md"
  [ "$prev" = "--json-schema" ] && printf '%s' "$a" > "$CAPTURE/schema.json"
  [ "$prev" = "--resume" ] && printf '%s' "$a" > "$CAPTURE/resume.txt"
  prev="$a"
done
if [ -d "$CLAUDE_CONFIG_DIR/skills" ]; then cp -r "$CLAUDE_CONFIG_DIR/skills" "$CAPTURE/skills"; fi
(cd "$HOME" && find . -mindepth 1 | sort) > "$CAPTURE/home.txt"
echo '{"type":"system","subtype":"init","session_id":"11111111-2222-4333-8444-555555555555","model":"claude-test"}'
echo '{"type":"assistant","session_id":"11111111-2222-4333-8444-555555555555","message":{"model":"claude-test","content":[{"type":"text","text":"done"}]}}'
echo '{"type":"result","subtype":"success","is_error":false,"result":"done","num_turns":1,"session_id":"11111111-2222-4333-8444-555555555555"}'
`,
  );
  chmodSync(path.join(bin, "claude"), 0o755);
  return {
    path: [bin, process.env.PATH ?? "/usr/bin:/bin"].join(":"),
    capture,
    read: (name) => (existsSync(path.join(capture, name)) ? readFileSync(path.join(capture, name), "utf8") : undefined),
    ran: () => existsSync(path.join(capture, "argv.txt")),
  };
}

/** Inputs that select the fake as `agent: claude` (the scenario's command agent switched off). */
export const FAKE_CLAUDE_INPUTS = {
  agent: "claude",
  "agent-command": "",
  "agent-version": "preinstalled",
  secrets: "ANTHROPIC_API_KEY=sk-ant-attack-test-0123456789",
};
