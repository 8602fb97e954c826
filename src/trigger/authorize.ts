/**
 * Who may trigger the agent. Write access (write, maintain, admin, from the
 * collaborator permission API) or an explicit listing; bots only when listed
 * in allowed-bots — a `[bot]` suffix or a bot's repository permission grants
 * nothing by itself, because any app installed on the repository could then
 * drive the agent.
 */
import type { GitHubSettings } from "../config/schema.js";
import type { Actor } from "../shared/trigger.js";
import type { GitHubApi } from "../github/api.js";

const WRITE_PERMISSIONS = ["admin", "maintain", "write"];

export type Authorization = { allowed: true; via: string } | { allowed: false; reason: string };

function normalize(login: string): string {
  return login.trim().toLowerCase().replace(/\[bot\]$/, "");
}

function listed(list: string[], login: string): boolean {
  const l = normalize(login);
  return list.some((entry) => entry.trim() === "*" || normalize(entry) === l);
}

export async function authorize(actor: Actor, settings: Pick<GitHubSettings, "allowedUsers" | "allowedBots">, api: Pick<GitHubApi, "permission">): Promise<Authorization> {
  if (actor.isBot) {
    if (listed(settings.allowedBots, actor.login)) return { allowed: true, via: "allowed-bots" };
    return { allowed: false, reason: `@${actor.login} is a bot and not listed in 'allowed-bots'` };
  }
  if (listed(settings.allowedUsers, actor.login)) return { allowed: true, via: "allowed-users" };
  const permission = await api.permission(actor.login);
  if (WRITE_PERMISSIONS.includes(permission)) return { allowed: true, via: `${permission} permission` };
  return { allowed: false, reason: `@${actor.login} has '${permission}' permission on the repository (write, maintain or admin needed) and is not listed in 'allowed-users'` };
}
