/**
 * The one place an Octokit is made. Every API call Agent Runner makes goes
 * through it, so every call gets the same robustness:
 * - 5xx and network errors: @octokit/plugin-retry (3 retries, 1 s, 4 s, 9 s);
 * - 429, secondary rate limits and exhausted primary limits: wait as GitHub
 *   says (retry-after / x-ratelimit-reset, capped) and try again.
 * @actions/github is imported lazily: it parses GITHUB_EVENT_PATH when loaded,
 * and a malformed event must surface as our ConfigurationError, not a crash.
 */
import type { Octokit as CoreOctokit } from "@octokit/core";
import type { GitHub } from "@actions/github/lib/utils";
import { ConfigurationError, errorMessage } from "../errors.js";
import type { Logger } from "../logger.js";

export type Octokit = InstanceType<typeof GitHub>;

export interface ClientOptions {
  token: string;
  /** GITHUB_API_URL; passed explicitly because @actions/github reads the env at import time. */
  apiUrl: string;
  log: Logger;
  /** Base for plugin-retry's quadratic backoff (ms). */
  retryBaseMs?: number;
  /** Longest single wait for a rate limit before giving up (ms). */
  maxRateLimitWaitMs?: number;
}

const RATE_LIMIT_RETRIES = 3;

interface RequestErrorLike {
  status: number;
  message: string;
  response?: { headers?: Record<string, string | number | undefined>; data?: unknown };
}

function isRequestError(e: unknown): e is RequestErrorLike {
  return typeof e === "object" && e !== null && typeof (e as { status?: unknown }).status === "number";
}

/** How long GitHub asks us to wait, or undefined when the error is not a rate limit. */
export function rateLimitWaitMs(e: unknown, now = Date.now()): number | undefined {
  if (!isRequestError(e) || (e.status !== 403 && e.status !== 429)) return undefined;
  const h = e.response?.headers ?? {};
  const retryAfter = Number(h["retry-after"]);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return Math.max(1, retryAfter) * 1000;
  if (String(h["x-ratelimit-remaining"]) === "0") {
    const reset = Number(h["x-ratelimit-reset"]);
    return Number.isFinite(reset) ? Math.max(1000, reset * 1000 - now + 1000) : 60_000;
  }
  const data = e.response?.data;
  const message = typeof data === "object" && data !== null && "message" in data ? String((data as { message: unknown }).message) : e.message;
  if (/secondary rate limit|abuse detection/i.test(message)) return 60_000;
  // A bare 429 is a rate limit too.
  return e.status === 429 ? 60_000 : undefined;
}

function rateLimitPlugin(log: Logger, maxWaitMs: number) {
  return (octokit: CoreOctokit) => {
    octokit.hook.wrap("request", async (request, options) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await request(options);
        } catch (e) {
          const wait = rateLimitWaitMs(e);
          if (wait === undefined || attempt >= RATE_LIMIT_RETRIES) throw e;
          if (wait > maxWaitMs) {
            log.warning(`GitHub API rate limit on ${options.method} ${options.url}: GitHub asks to wait ${Math.round(wait / 1000)} s, longer than Agent Runner waits.`);
            throw e;
          }
          log.warning(`GitHub API rate limit on ${options.method} ${options.url}; retrying in ${Math.round(wait / 1000)} s.`);
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    });
  };
}

export async function createOctokit(opts: ClientOptions): Promise<Octokit> {
  const [{ getOctokit }, { retry }] = await Promise.all([import("@actions/github"), import("@octokit/plugin-retry")]);
  return getOctokit(
    opts.token,
    {
      baseUrl: opts.apiUrl.replace(/\/+$/, ""),
      // 429 is handled by the rate-limit plugin, which honours retry-after.
      retry: { retryAfterBaseValue: opts.retryBaseMs ?? 1000, doNotRetry: [400, 401, 403, 404, 410, 422, 429, 451] },
      log: { debug: () => {}, info: () => {}, warn: (m: string) => opts.log.debug(m), error: (m: string) => opts.log.debug(m) },
    },
    retry,
    rateLimitPlugin(opts.log, opts.maxRateLimitWaitMs ?? 120_000),
  );
}

/** One line for the log: status and GitHub's message, never the token. */
export function apiErrorMessage(e: unknown): string {
  if (isRequestError(e)) {
    const data = e.response?.data;
    const msg = typeof data === "object" && data !== null && "message" in data ? String((data as { message: unknown }).message) : e.message;
    return `HTTP ${e.status}: ${msg}`;
  }
  return errorMessage(e);
}

/**
 * A GitHub API call that failed after the retries: reported as one clear
 * message without a stack (like a configuration problem: the token's
 * permissions, an outage), not as a bug in Agent Runner.
 */
export class GitHubApiError extends ConfigurationError {
  override name = "GitHubApiError";
  constructor(what: string, cause: unknown) {
    super(`${what} failed: ${apiErrorMessage(cause)}`);
  }
}

export function isNotFound(e: unknown): boolean {
  return isRequestError(e) && e.status === 404;
}
