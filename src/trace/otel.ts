/**
 * OpenTelemetry export of a finished run: one trace, sent once, after the
 * run (and after delivery), to an OTLP/HTTP collector.
 *
 *   invoke_agent <agent>            the run (INTERNAL): conclusion, usage, repository, workflow, run id, thread
 *   ├── chat <model>                one per model request the gateway forwarded (CLIENT): tokens, status, latency
 *   └── execute_tool <tool>         one per tool call in trace.jsonl (INTERNAL): name, call id, failed or not
 *
 * Attributes follow the OpenTelemetry GenAI semantic conventions (gen_ai.*),
 * the CICD and VCS ones for the workflow run and repository, and
 * `agent_runner.*` for what those do not cover. No prompt, message or tool
 * input/output leaves the runner: only names, ids, counts and times. Every
 * attribute passes the allowlist in otel-attributes.ts (listed keys, values
 * of a fixed shape); the agent's own words (its stderr tail in the run's
 * reason, its error messages) are never exported, and a tool or model name
 * that is not an identifier is exported as `other`.
 *
 * The export is bounded: everything (reading the trace, every HTTP attempt
 * and retry) must finish within OTEL_EXPORT_TIMEOUT_MS, after which the step
 * goes on; a dead or slow collector costs at most that and never fails the run.
 */
import path from "node:path";
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from "@opentelemetry/api";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { AlwaysOnSampler, InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from "@opentelemetry/sdk-trace";
import { ATTR_ERROR_TYPE, ATTR_HTTP_RESPONSE_STATUS_CODE, ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import {
  ATTR_CICD_PIPELINE_NAME,
  ATTR_CICD_PIPELINE_RESULT,
  ATTR_CICD_PIPELINE_RUN_ID,
  ATTR_CICD_PIPELINE_RUN_URL_FULL,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_STREAM,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_VCS_REF_HEAD_NAME,
  ATTR_VCS_REPOSITORY_NAME,
  ATTR_VCS_REPOSITORY_URL_FULL,
} from "@opentelemetry/semantic-conventions/incubating";
import type { ModelProvider } from "../shared/agents.js";
import type { HostContext, OtelEnv } from "../config/host.js";
import type { Settings } from "../config/schema.js";
import { RESULTS_FILES } from "../constants.js";
import { errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Outputs } from "../shared/outputs.js";
import { CONCLUSION_OUTPUTS, type ConclusionOutput, type RunResult } from "../result.js";
import type { StageContext } from "../stage-context.js";
import type { ModelRequestRecord } from "./model-requests.js";
import { allowedAttributes, apiPathOr, identifierOr } from "./otel-attributes.js";
import type { Redactor } from "../shared/redact.js";
import { readTraceEvents } from "./transcript-files.js";

/** The whole export (trace read, HTTP attempts, retries) ends within this; the step then goes on. */
export const OTEL_EXPORT_TIMEOUT_MS = 5000;
/** Tool spans per trace; a longer run is cut there (the run span says how many were left out). */
const MAX_TOOL_SPANS = 5000;
/** Spans per OTLP request, so one request stays well under collectors' body limits. */
const BATCH_SIZE = 1000;
const PROVIDER_NAMES: Record<ModelProvider, string> = { anthropic: "anthropic", openai: "openai", gemini: "gcp.gemini" };
const BACKEND_PROVIDERS: Record<string, ModelProvider> = { claude: "anthropic", codex: "openai", opencode: "openai", gemini: "gemini" };
/** The semantic conventions' names of the clouds (input `provider`, in result metadata.provider): they win over the wire API's. */
const CLOUD_PROVIDER_NAMES: Record<string, string> = { bedrock: "aws.bedrock", vertex: "gcp.vertex_ai", azure: "azure.ai.openai" };

/** gen_ai.provider.name of a run: the cloud it went through, else its CLI's own provider. */
function providerName(result: RunResult): string | undefined {
  const cloud = typeof result.metadata.provider === "string" ? CLOUD_PROVIDER_NAMES[result.metadata.provider] : undefined;
  const own = BACKEND_PROVIDERS[result.agentBackend];
  return cloud ?? (own ? PROVIDER_NAMES[own] : undefined);
}

/** Where the trace goes and with which headers, and which setting said so. */
export interface OtelTarget {
  url: string;
  headers: Record<string, string>;
  source: "otel-endpoint" | "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_EXPORTER_OTLP_ENDPOINT";
}

/**
 * The traces URL: the `otel-endpoint` input (a URL without a path gets
 * `/v1/traces`), else OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
 * OTEL_EXPORTER_OTLP_ENDPOINT plus `/v1/traces`, as the OTLP exporter spec
 * reads them. Undefined: no export. A malformed variable is a warning, not
 * an error: the runner's environment is not the step's configuration.
 */
export function otelTarget(settings: Pick<Settings, "otel">, env: OtelEnv | undefined, log?: Logger): OtelTarget | undefined {
  const headers = env?.headers ?? {};
  if (settings.otel) {
    const u = new URL(settings.otel.endpoint);
    if (u.pathname === "/" || u.pathname === "") u.pathname = "/v1/traces";
    return { url: u.href, headers, source: "otel-endpoint" };
  }
  const given = env?.tracesEndpoint
    ? { raw: env.tracesEndpoint, source: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" as const }
    : env?.endpoint
      ? { raw: env.endpoint, source: "OTEL_EXPORTER_OTLP_ENDPOINT" as const }
      : undefined;
  if (!given) return undefined;
  let u: URL;
  try {
    u = new URL(given.raw);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    log?.warning(`OpenTelemetry: ${given.source} is not an http(s) URL; no trace is exported.`);
    return undefined;
  }
  if (given.source === "OTEL_EXPORTER_OTLP_ENDPOINT") u.pathname = `${u.pathname.replace(/\/+$/, "")}/v1/traces`;
  return { url: u.href, headers, source: given.source };
}

/** What the trace says about where the run happened, besides the result itself. */
export interface RunTraceContext {
  host: Pick<HostContext, "repository" | "workflow" | "runId" | "runAttempt" | "serverUrl" | "ref" | "eventName">;
  /** The issue or pull request the run was for. */
  thread?: number;
  /** The step's outputs: its `conclusion` (the verdict, delivery included) and delivery's (pull-request-url, commit-sha, comment-url, branch). */
  delivery?: Partial<Record<string, string>>;
  /** When the run span ends (default: now, i.e. after delivery). */
  endedAt?: number;
}

export interface OtelExportReport {
  exported: boolean;
  spans: number;
  traceId?: string;
  durationMs: number;
  error?: string;
}

/**
 * Builds the run's trace and sends it. Never throws; logs one line with the
 * outcome. `timeoutMs` bounds the whole call.
 */
export async function exportRunTrace(opts: {
  target: OtelTarget;
  result: RunResult;
  resultsDir: string;
  context: RunTraceContext;
  log: Logger;
  redactor: Redactor;
  timeoutMs?: number;
}): Promise<OtelExportReport> {
  const started = Date.now();
  const deadline = started + (opts.timeoutMs ?? OTEL_EXPORT_TIMEOUT_MS);
  const where = shownUrl(opts.target.url);
  let spans: ReadableSpan[] = [];
  try {
    spans = await buildRunSpans(opts.result, path.join(opts.resultsDir, RESULTS_FILES.trace), opts.context, opts.redactor, deadline);
    const error = await sendSpans(opts.target, spans, deadline);
    const durationMs = Date.now() - started;
    const traceId = spans[0]?.spanContext().traceId;
    if (error) {
      opts.log.warning(opts.redactor.redact(`OpenTelemetry: exporting the trace to ${where} failed after ${durationMs} ms (${error}); the run is not affected.`));
      return { exported: false, spans: spans.length, ...(traceId ? { traceId } : {}), durationMs, error };
    }
    opts.log.info(`OpenTelemetry: exported trace ${traceId} (${spans.length} spans) to ${where} in ${durationMs} ms.`);
    return { exported: true, spans: spans.length, ...(traceId ? { traceId } : {}), durationMs };
  } catch (e) {
    const durationMs = Date.now() - started;
    const error = errorMessage(e);
    opts.log.warning(opts.redactor.redact(`OpenTelemetry: no trace exported (${error}); the run is not affected.`));
    return { exported: false, spans: spans.length, durationMs, error };
  }
}

/** The collector's address for the log: no credentials, no query. */
function shownUrl(url: string): string {
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}

/** One OTLP request per batch, all within the deadline; the first failure ends the export. */
async function sendSpans(target: OtelTarget, spans: ReadableSpan[], deadline: number): Promise<string | undefined> {
  const remaining = () => deadline - Date.now();
  if (remaining() <= 0) return `the ${OTEL_EXPORT_TIMEOUT_MS / 1000} s export budget was used up before sending`;
  const exporter = new OTLPTraceExporter({ url: target.url, headers: target.headers, timeoutMillis: Math.max(1, remaining()) });
  let timer: NodeJS.Timeout | undefined;
  try {
    for (let i = 0; i < spans.length; i += BATCH_SIZE) {
      const batch = spans.slice(i, i + BATCH_SIZE);
      const left = remaining();
      if (left <= 0) return `timed out after ${OTEL_EXPORT_TIMEOUT_MS / 1000} s`;
      // The exporter bounds its own attempts with timeoutMillis; this timer is the backstop.
      const outcome = await Promise.race([
        new Promise<string | undefined>((resolve) =>
          exporter.export(batch, (r) => resolve(r.code === 0 ? undefined : (r.error?.message ?? "the collector refused the export"))),
        ),
        new Promise<string>((resolve) => {
          timer = setTimeout(() => resolve(`timed out after ${OTEL_EXPORT_TIMEOUT_MS / 1000} s`), left);
        }),
      ]);
      clearTimeout(timer);
      if (outcome) return outcome;
    }
    return undefined;
  } finally {
    clearTimeout(timer);
    // Drops pending requests and idle sockets; not awaited past the deadline.
    void Promise.race([exporter.shutdown(), new Promise((r) => setTimeout(r, Math.max(0, remaining())).unref())]).catch(() => undefined);
  }
}

/** The run's spans, ended and ready to export (exported for tests). */
export async function buildRunSpans(
  result: RunResult,
  traceFile: string,
  context: RunTraceContext,
  redactor: Redactor,
  deadline = Date.now() + OTEL_EXPORT_TIMEOUT_MS,
): Promise<ReadableSpan[]> {
  const memory = new InMemorySpanExporter();
  const provider = new TracerProvider({
    // Explicit, so OTEL_* variables read by the SDK itself cannot drop or cut the run's trace.
    sampler: new AlwaysOnSampler(),
    spanLimits: { attributeCountLimit: 128, attributeValueLengthLimit: 4096, eventCountLimit: 256 },
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: "agent-runner" }),
    spanProcessors: [new SimpleSpanProcessor({ exporter: memory })],
  });
  const tracer = provider.getTracer("agent-runner");
  // The allowlist first (our keys, values of a fixed shape), then the redactor on what is left.
  const clean = (attrs: Attributes): Attributes =>
    Object.fromEntries(
      Object.entries(allowedAttributes(attrs)).map(([k, v]) => [k, typeof v === "string" ? redactor.redact(v) : Array.isArray(v) ? v.map((x) => (typeof x === "string" ? redactor.redact(x) : x)) : v]),
    );

  const startMs = Date.parse(result.startedAt) || Date.now();
  const endMs = Math.max(context.endedAt ?? Date.now(), startMs);
  const root = tracer.startSpan(`invoke_agent ${identifierOr(result.agentName, "agent")}`, { kind: SpanKind.INTERNAL, startTime: startMs, attributes: clean(runAttributes(result, context)) }, ROOT_CONTEXT);
  const parent = trace.setSpan(ROOT_CONTEXT, root);

  const provider_ = providerName(result);
  const records = Array.isArray(result.metadata.modelRequests) ? (result.metadata.modelRequests as ModelRequestRecord[]) : [];
  for (const r of records) {
    const span = tracer.startSpan(modelSpanName(r), { kind: SpanKind.CLIENT, startTime: r.startedAt, attributes: clean(modelAttributes(r, provider_)) }, parent);
    if ((r.status ?? 0) >= 400 || r.errorType) span.setStatus({ code: SpanStatusCode.ERROR, message: r.errorType ? identifierOr(r.errorType, "error") : `HTTP ${r.status}` });
    span.end(r.startedAt + r.durationMs);
  }

  const tools = await addToolSpans(tracer, parent, traceFile, clean, endMs, deadline);
  if (tools.dropped) root.setAttribute("agent_runner.tool_spans_dropped", tools.dropped);
  for (const e of tools.notices) root.addEvent(e.name, clean(e.attributes), e.time);

  // The conclusion, never the reason: a failure's reason is often the agent's own stderr.
  const conclusion = runConclusion(result, context);
  if (conclusion === "failure" || conclusion === "incomplete" || conclusion === "timeout" || conclusion === "cancelled") root.setStatus({ code: SpanStatusCode.ERROR, message: `agent run ${conclusion}` });
  root.end(endMs);
  await provider.forceFlush();
  const spans = memory.getFinishedSpans();
  await provider.shutdown();
  // The run span first (it ends last).
  const rootId = root.spanContext().spanId;
  return [...spans.filter((s) => s.spanContext().spanId === rootId), ...spans.filter((s) => s.spanContext().spanId !== rootId)];
}

/** The step's `conclusion` output (checks and delivery included) when it set one; the agent run's own otherwise. */
function runConclusion(result: RunResult, context: RunTraceContext): ConclusionOutput {
  const said = context.delivery?.conclusion;
  return (CONCLUSION_OUTPUTS as readonly string[]).includes(said ?? "") ? (said as ConclusionOutput) : result.conclusion;
}

function runAttributes(result: RunResult, context: RunTraceContext): Attributes {
  const { host } = context;
  const backendProvider = providerName(result);
  const repoUrl = host.repository ? `${host.serverUrl}/${host.repository}` : undefined;
  const d = context.delivery ?? {};
  const conclusion = runConclusion(result, context);
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: "invoke_agent",
    [ATTR_GEN_AI_AGENT_NAME]: result.agentName,
    ...(backendProvider ? { [ATTR_GEN_AI_PROVIDER_NAME]: backendProvider } : {}),
    [ATTR_GEN_AI_REQUEST_MODEL]: result.model,
    [ATTR_GEN_AI_CONVERSATION_ID]: result.sessionId,
    [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: result.usage.inputTokens,
    [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: result.usage.outputTokens,
    [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: result.usage.cachedTokens,
    [ATTR_CICD_PIPELINE_NAME]: host.workflow,
    [ATTR_CICD_PIPELINE_RUN_ID]: host.runId,
    [ATTR_CICD_PIPELINE_RUN_URL_FULL]: repoUrl && host.runId ? `${repoUrl}/actions/runs/${host.runId}` : undefined,
    [ATTR_CICD_PIPELINE_RESULT]: conclusion,
    [ATTR_VCS_REPOSITORY_NAME]: host.repository,
    [ATTR_VCS_REPOSITORY_URL_FULL]: repoUrl,
    [ATTR_VCS_REF_HEAD_NAME]: host.ref?.replace(/^refs\/heads\//, ""),
    "github.repository": host.repository,
    "github.workflow": host.workflow,
    "github.run_id": host.runId,
    "github.run_attempt": host.runAttempt,
    "github.event_name": host.eventName,
    "agent_runner.thread": context.thread,
    "agent_runner.conclusion": conclusion,
    "agent_runner.budget_exceeded": result.budgetExceeded === true ? true : undefined,
    "agent_runner.agent.backend": result.agentBackend,
    "agent_runner.agent.version": result.agentVersion,
    "agent_runner.sandbox": result.sandboxBackend,
    "agent_runner.duration_ms": result.durationMs,
    "agent_runner.cost_usd": result.usage.costUsd,
    "agent_runner.tool_calls": result.toolCalls,
    "agent_runner.turns": result.numTurns,
    "agent_runner.changed_files": result.diff.changedFiles.length,
    "agent_runner.network_blocked": result.networkBlocked,
    "agent_runner.permission_denials": result.permissionDenials.length,
    "agent_runner.delivery.pull_request_url": d["pull-request-url"],
    "agent_runner.delivery.commit_sha": d["commit-sha"],
    "agent_runner.delivery.comment_url": d["comment-url"],
    "agent_runner.delivery.branch": d.branch,
  };
}

/** `chat claude-sonnet-4-5`, `generate_content gemini-2.5-pro`; model lists and token counts by method and path. */
function modelSpanName(r: ModelRequestRecord): string {
  if (!r.operation) return `${identifierOr(r.method, "REQUEST")} ${apiPathOr(r.path.split("?")[0] ?? "", "/")}`;
  const model = r.requestModel ?? r.responseModel;
  return model ? `${r.operation} ${identifierOr(model, "other")}` : r.operation;
}

function modelAttributes(r: ModelRequestRecord, provider: string | undefined): Attributes {
  const failed = (r.status ?? 0) >= 400 || r.errorType;
  return {
    ...(r.operation ? { [ATTR_GEN_AI_OPERATION_NAME]: r.operation } : {}),
    ...(provider ? { [ATTR_GEN_AI_PROVIDER_NAME]: provider } : {}),
    [ATTR_GEN_AI_REQUEST_MODEL]: r.requestModel,
    [ATTR_GEN_AI_REQUEST_STREAM]: r.stream,
    [ATTR_GEN_AI_RESPONSE_MODEL]: r.responseModel,
    [ATTR_GEN_AI_RESPONSE_ID]: r.responseId,
    ...(r.finishReasons?.length ? { [ATTR_GEN_AI_RESPONSE_FINISH_REASONS]: r.finishReasons } : {}),
    ...(r.usage
      ? {
          [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: r.usage.inputTokens,
          [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: r.usage.outputTokens,
          [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: r.usage.cachedTokens,
          ...(r.usage.cacheWriteTokens !== undefined ? { [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: r.usage.cacheWriteTokens } : {}),
        }
      : {}),
    // Seconds, as the convention has it.
    ...(r.stream && r.firstByteMs !== undefined ? { [ATTR_GEN_AI_RESPONSE_TIME_TO_FIRST_CHUNK]: r.firstByteMs / 1000 } : {}),
    [ATTR_HTTP_RESPONSE_STATUS_CODE]: r.status,
    ...(failed ? { [ATTR_ERROR_TYPE]: r.errorType ?? String(r.status) } : {}),
    "agent_runner.cost_usd": r.costUsd,
    "agent_runner.duration_ms": r.durationMs,
    // A rate-limited or overloaded answer the gateway held back, and what it did next (sandbox/gateway-retry.ts).
    "agent_runner.retry.reason": r.retry?.reason,
    "agent_runner.retry.next": r.retry?.next,
    "agent_runner.retry.wait_ms": r.retry?.waitMs,
    "agent_runner.fallback_for": r.fallbackFor,
  };
}

interface OpenCall {
  span: Span;
  id?: string;
  name: string;
}

/**
 * One span per tool call, from call to result (a call the trace never
 * answered ends with the run). Results match calls by id, else by name,
 * else the oldest open call, as the transcript matches them. Notices
 * (permission denials, blocked hosts, errors) become events on the run span.
 */
async function addToolSpans(
  tracer: ReturnType<TracerProvider["getTracer"]>,
  parent: typeof ROOT_CONTEXT,
  traceFile: string,
  clean: (a: Attributes) => Attributes,
  endMs: number,
  deadline: number,
): Promise<{ dropped: number; notices: { name: string; attributes: Attributes; time: number }[] }> {
  const open: OpenCall[] = [];
  const notices: { name: string; attributes: Attributes; time: number }[] = [];
  let made = 0;
  let dropped = 0;
  // Reading a huge trace must not eat the export's time: keep half of it for sending.
  const readUntil = Date.now() + (deadline - Date.now()) / 2;
  try {
    for await (const e of readTraceEvents(traceFile)) {
      if (Date.now() > readUntil) break;
      const at = Date.parse(e.ts) || endMs;
      if (e.type === "tool_call") {
        if (made >= MAX_TOOL_SPANS) {
          dropped++;
          continue;
        }
        made++;
        // The agent's stream names the tool: only an identifier is a name we export.
        const name = typeof e.name === "string" && e.name ? identifierOr(e.name, "other") : "tool";
        const span = tracer.startSpan(
          `execute_tool ${name}`,
          {
            kind: SpanKind.INTERNAL,
            startTime: at,
            attributes: clean({ [ATTR_GEN_AI_OPERATION_NAME]: "execute_tool", [ATTR_GEN_AI_TOOL_NAME]: name, [ATTR_GEN_AI_TOOL_CALL_ID]: e.id }),
          },
          parent,
        );
        open.push({ span, ...(e.id ? { id: e.id } : {}), name });
        if (open.length > 2000) open.shift()!.span.end(at);
      } else if (e.type === "tool_result") {
        const i = matchCall(open, e.id, e.name);
        if (i < 0) continue;
        const [call] = open.splice(i, 1);
        if (e.isError === true) {
          call!.span.setStatus({ code: SpanStatusCode.ERROR, message: "the tool reported an error" });
          call!.span.setAttribute(ATTR_ERROR_TYPE, "tool_error");
        }
        call!.span.end(at);
      } else if (e.type === "permission_denied") notices.push({ name: "agent_runner.permission_denied", attributes: { [ATTR_GEN_AI_TOOL_NAME]: e.tool }, time: at });
      else if (e.type === "network_blocked") notices.push({ name: "agent_runner.network_blocked", attributes: { "server.address": e.host }, time: at });
      // That the agent reported an error, not its words.
      else if (e.type === "error" && notices.length < 100) notices.push({ name: "agent_runner.error", attributes: { [ATTR_ERROR_TYPE]: "agent_error" }, time: at });
    }
  } catch {
    // A missing or unreadable trace.jsonl: the run and model spans still go out.
  }
  for (const call of open) {
    call.span.setAttribute("agent_runner.tool_result", "missing");
    call.span.end(endMs);
  }
  return { dropped, notices: notices.slice(0, 200) };
}

function matchCall(open: OpenCall[], id: string | undefined, name: string | undefined): number {
  if (id) {
    const byId = open.findIndex((c) => c.id === id);
    if (byId >= 0) return byId;
  }
  if (name) {
    const byName = open.findIndex((c) => c.name === name && (!id || !c.id));
    if (byName >= 0) return byName;
  }
  return open.findIndex((c) => !id || !c.id);
}

/**
 * The action's export stage, after delivery (phase run/all: the step that ran
 * the agent): nothing unless `otel-endpoint` or the runner's OTEL_* variables name a collector.
 */
export async function exportTraceStage(ctx: StageContext, result: RunResult, thread: number | undefined, outputs: Outputs | undefined): Promise<void> {
  const target = otelTarget(ctx.settings, ctx.io.host.otel, ctx.log);
  if (!target) return;
  await exportRunTrace({
    target,
    result,
    resultsDir: ctx.resultsDir,
    context: { host: ctx.io.host, ...(thread !== undefined ? { thread } : {}), ...(outputs ? { delivery: outputs } : {}) },
    log: ctx.log,
    redactor: ctx.redactor,
  });
}
