/**
 * Progress on GitHub while the agent works: an 👀 reaction on the triggering
 * comment and a comment that says "working", shows the latest activity
 * (throttled edits), and is rewritten with the result at the end.
 * `sticky` finds its comment again by a hidden marker, so a rerun edits it;
 * `new` posts a fresh one; `none` posts nothing. A failing API call here is
 * a warning, never the end of the run.
 */
import type { CommentMode } from "../config/schema.js";
import type * as z from "../shared/zod.js";
import type { GitHubApi, IssueComment, ReactionTarget } from "../github/api.js";
import { apiErrorMessage } from "../github/client.js";
import type { Logger } from "../logger.js";
import type { TracedEvent } from "../shared/events.js";
import { formatEvent } from "../trace/live-log.js";
import type { Redactor } from "../shared/redact.js";
import { stickyMarker, workingBody } from "./comment.js";
import type { PostTextPolicy } from "./post-text.js";
import { toSafeMarkdown } from "./safe-markdown.js";

export interface ProgressOptions {
  api: GitHubApi;
  mode: z.infer<typeof CommentMode>;
  /** Issue or PR number the comment goes on; undefined: no comment (schedule/dispatch). */
  threadNumber?: number;
  reactTo?: ReactionTarget;
  stickyKey: string;
  runUrl?: string;
  requester?: string;
  log: Logger;
  redactor: Redactor;
  /** What may render in what we post (the repository's host, allowed-domains, the requester's mention). */
  postText: PostTextPolicy;
  /** Minimum time between two progress edits. */
  throttleMs?: number;
  /**
   * Threat detection's secret scan, for the activity lines (the agent's own
   * words and commands) before an edit posts them: false hides them. The
   * final text waits for threat detection itself.
   */
  screen?: (activity: string) => Promise<boolean>;
  /** Told the comment's id once it exists (saved for the post step). */
  onComment?: (id: number, marker: string) => void;
}

const ACTIVITY_LINES = 8;
const HIDDEN_ACTIVITY = "(activity hidden: threat detection's secret scan flagged it)";

export class Progress {
  readonly marker: string;
  private comment: IssueComment | undefined;
  private readonly activity: string[] = [];
  private chain: Promise<void> = Promise.resolve();
  private lastEdit = 0;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;

  constructor(private readonly o: ProgressOptions) {
    this.marker = stickyMarker(o.stickyKey);
  }

  get enabled(): boolean {
    return this.o.mode !== "none" && this.o.threadNumber !== undefined;
  }

  get commentUrl(): string | undefined {
    return this.comment?.url;
  }

  /** React to the trigger and post (or find) the comment. */
  async start(): Promise<void> {
    if (this.o.reactTo) {
      await this.o.api.react(this.o.reactTo, "eyes").catch((e: unknown) => this.o.log.warning(`Could not add the 👀 reaction: ${apiErrorMessage(e)}`));
    }
    if (!this.enabled) return;
    await this.write(this.body());
  }

  /** Feed from runAgent's onEvent: remembers activity, edits the comment at most every throttleMs. */
  onEvent = (e: TracedEvent): void => {
    if (!this.enabled || this.finished) return;
    const line = formatEvent(e);
    if (!line || e.type === "session") return;
    this.activity.push(line.length > 300 ? `${line.slice(0, 299)}…` : line);
    if (this.activity.length > ACTIVITY_LINES) this.activity.shift();
    if (this.timer) return;
    const wait = Math.max(0, this.lastEdit + (this.o.throttleMs ?? 15_000) - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.finished) this.chain = this.chain.then(() => this.writeActivity());
    }, wait);
    this.timer.unref();
  };

  /** The agent has ended: no more activity edits (a pending one would post its last text before threat detection). */
  pause(): void {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Replace the comment with the final text (creating it when start could not). */
  async finish(body: string): Promise<void> {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
    if (!this.enabled) return;
    await this.write(body, true);
  }

  private body(activity: string[] = this.activity): string {
    return workingBody({
      marker: this.marker,
      ...(this.o.runUrl ? { runUrl: this.o.runUrl } : {}),
      ...(this.o.requester ? { requester: this.o.requester } : {}),
      activity,
    });
  }

  private async writeActivity(): Promise<void> {
    const lines = [...this.activity];
    const clean = !this.o.screen || (await this.o.screen(lines.join("\n")).catch(() => false));
    // Paused while the scan ran: the agent has ended, and its text now waits for threat detection.
    if (this.finished) return;
    await this.write(this.body(clean ? lines : [HIDDEN_ACTIVITY]));
  }

  private async write(text: string, final = false): Promise<void> {
    const api = this.o.api;
    // The last steps before GitHub: no secret, and nothing that loads, links out or pings.
    const body = toSafeMarkdown(this.o.redactor.redact(text), this.o.postText);
    this.lastEdit = Date.now();
    try {
      if (!this.comment && this.o.mode === "sticky") this.comment = await this.findSticky();
      const known = this.comment !== undefined;
      if (this.comment) this.comment = await api.updateComment(this.comment.id, body);
      else this.comment = await api.createComment(this.o.threadNumber!, body);
      if (!known) this.o.onComment?.(this.comment.id, this.marker);
    } catch (e) {
      const msg = `Could not ${this.comment ? "update" : "post"} the ${final ? "result" : "progress"} comment: ${apiErrorMessage(e)}`;
      if (final) throw new Error(msg);
      this.o.log.warning(msg);
    }
  }

  /**
   * The comment a previous attempt left. Only a bot's (or the token owner's)
   * comment counts: anyone can paste the marker into a comment of their own.
   */
  private async findSticky(): Promise<IssueComment | undefined> {
    const candidates = (await this.o.api.issueComments(this.o.threadNumber!)).filter((c) => c.body.includes(this.marker));
    if (!candidates.length) return undefined;
    const bots = candidates.filter((c) => c.authorType === "Bot");
    if (bots.length) return bots.at(-1);
    const me = await this.o.api.authenticatedLogin();
    return me ? candidates.filter((c) => c.author === me).at(-1) : undefined;
  }
}
