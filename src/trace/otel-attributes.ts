/**
 * What an exported span may carry: a fixed allowlist of attribute keys,
 * each with the shape its value must have. Values are ours (enums, numbers,
 * names and URLs we chose or GitHub gave us) or names an identifier pattern
 * allows (a model, a tool, a session id); never text the agent wrote (its
 * stderr, its messages, its errors). A key not listed here is dropped, and a
 * value that does not fit its rule is dropped, so agent text cannot ride
 * along by accident or by an attribute added later.
 */
import type { AttributeValue, Attributes } from "@opentelemetry/api";
import { CONCLUSION_OUTPUTS } from "../result.js";

/** A model, tool, session or response id; letters, digits and `._:/@+-`, at most 128 characters. */
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,127}$/;
/** A host name, IPv4 or bracketed IPv6 address, as the proxy recorded it. */
const HOST = /^(?:[A-Za-z0-9-]{1,63}\.)*[A-Za-z0-9-]{1,63}$|^\[[0-9A-Fa-f:.]{2,45}\]$/;
/** A model API path the gateway forwarded. */
const API_PATH = /^\/[A-Za-z0-9._:/-]{0,200}$/;
/** What the runner's environment says (repository, workflow name, ref, run ids): set by GitHub and the workflow, not the agent. */
const HOST_TEXT = /^[^\u0000-\u001f\u007f-\u009f]{1,256}$/;

export type AttributeRule =
  | "count"
  | "number"
  | "boolean"
  | "identifier"
  | "identifier-list"
  | "host"
  | "host-text"
  | "url"
  | { readonly oneOf: readonly string[] };

/** Every attribute key a span or span event of ours may carry, with its rule. */
export const OTEL_ATTRIBUTE_RULES: Readonly<Record<string, AttributeRule>> = {
  "gen_ai.operation.name": { oneOf: ["invoke_agent", "chat", "generate_content", "execute_tool"] },
  "gen_ai.agent.name": "identifier",
  "gen_ai.provider.name": { oneOf: ["anthropic", "openai", "gcp.gemini", "aws.bedrock", "gcp.vertex_ai", "azure.ai.openai"] },
  "gen_ai.request.model": "identifier",
  "gen_ai.request.stream": "boolean",
  "gen_ai.response.model": "identifier",
  "gen_ai.response.id": "identifier",
  "gen_ai.response.finish_reasons": "identifier-list",
  "gen_ai.response.time_to_first_chunk": "number",
  "gen_ai.conversation.id": "identifier",
  "gen_ai.tool.name": "identifier",
  "gen_ai.tool.call.id": "identifier",
  "gen_ai.usage.input_tokens": "count",
  "gen_ai.usage.output_tokens": "count",
  "gen_ai.usage.cache_read.input_tokens": "count",
  "gen_ai.usage.cache_creation.input_tokens": "count",
  "http.response.status_code": "count",
  "error.type": "identifier",
  "server.address": "host",
  "cicd.pipeline.name": "host-text",
  "cicd.pipeline.run.id": "host-text",
  "cicd.pipeline.run.url.full": "url",
  "cicd.pipeline.result": { oneOf: CONCLUSION_OUTPUTS },
  "vcs.repository.name": "host-text",
  "vcs.repository.url.full": "url",
  "vcs.ref.head.name": "host-text",
  "github.repository": "host-text",
  "github.workflow": "host-text",
  "github.run_id": "host-text",
  "github.run_attempt": "host-text",
  "github.event_name": "identifier",
  "agent_runner.thread": "count",
  "agent_runner.conclusion": { oneOf: CONCLUSION_OUTPUTS },
  "agent_runner.budget_exceeded": "boolean",
  "agent_runner.agent.backend": { oneOf: ["claude", "codex", "gemini", "opencode", "command"] },
  "agent_runner.agent.version": "identifier",
  "agent_runner.sandbox": { oneOf: ["bwrap", "docker", "none"] },
  "agent_runner.duration_ms": "count",
  "agent_runner.cost_usd": "number",
  "agent_runner.tool_calls": "count",
  "agent_runner.turns": "count",
  "agent_runner.changed_files": "count",
  "agent_runner.network_blocked": "count",
  "agent_runner.permission_denials": "count",
  "agent_runner.tool_spans_dropped": "count",
  "agent_runner.tool_result": { oneOf: ["missing"] },
  // A rate-limited or overloaded answer the model gateway held back (sandbox/gateway-retry.ts).
  "agent_runner.retry.reason": { oneOf: ["rate_limited", "overloaded"] },
  "agent_runner.retry.next": { oneOf: ["retry", "fallback", "give-up"] },
  "agent_runner.retry.wait_ms": "count",
  "agent_runner.fallback_for": "identifier",
  "agent_runner.delivery.pull_request_url": "url",
  "agent_runner.delivery.commit_sha": "identifier",
  "agent_runner.delivery.comment_url": "url",
  "agent_runner.delivery.branch": "host-text",
};

function isUrl(value: string): boolean {
  if (value.length > 2048 || !HOST_TEXT.test(value.slice(0, 256))) return false;
  try {
    const u = new URL(value);
    return (u.protocol === "https:" || u.protocol === "http:") && !u.username && !u.password;
  } catch {
    return false;
  }
}

/** Whether `value` fits `rule`. */
export function fitsRule(rule: AttributeRule, value: AttributeValue): boolean {
  if (typeof rule === "object") return typeof value === "string" && rule.oneOf.includes(value);
  switch (rule) {
    case "count":
      return typeof value === "number" && Number.isInteger(value) && value >= 0;
    case "number":
      return typeof value === "number" && Number.isFinite(value);
    case "boolean":
      return typeof value === "boolean";
    case "identifier-list":
      return Array.isArray(value) && value.length <= 16 && value.every((v) => typeof v === "string" && IDENTIFIER.test(v));
    case "identifier":
      return typeof value === "string" && IDENTIFIER.test(value);
    case "host":
      return typeof value === "string" && value.length <= 255 && HOST.test(value);
    case "host-text":
      return typeof value === "string" && HOST_TEXT.test(value);
    case "url":
      return typeof value === "string" && isUrl(value);
  }
}

/** The attributes the allowlist keeps: listed keys whose values fit their rule. */
export function allowedAttributes(attrs: Attributes): Attributes {
  const kept: Attributes = {};
  for (const [key, value] of Object.entries(attrs)) {
    const rule = OTEL_ATTRIBUTE_RULES[key];
    if (rule !== undefined && value !== undefined && fitsRule(rule, value)) kept[key] = value;
  }
  return kept;
}

/** `name` when it is an identifier, else `fallback`: for span names, which carry a tool or model name. */
export function identifierOr(name: string | undefined, fallback: string): string {
  return name !== undefined && IDENTIFIER.test(name) ? name : fallback;
}

/** A forwarded request's path when it looks like a model API path, else `fallback`. */
export function apiPathOr(p: string, fallback: string): string {
  return API_PATH.test(p) ? p : fallback;
}
