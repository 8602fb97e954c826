/**
 * fetch that honours the runner's proxy settings (HTTPS_PROXY, HTTP_PROXY, NO_PROXY) the way the
 * step's GitHub API calls do: @actions/http-client decides whether a URL goes through a proxy, and its
 * undici agent carries it. Node's own fetch ignores those settings, so on a self-hosted runner behind a
 * proxy an attachment, an artifact or the job's OIDC token could not be fetched.
 */
import type { Dispatcher } from "undici";

export async function fetchHonouringProxy(url: string | URL, init: RequestInit = {}): Promise<Response> {
  // Loaded on first use: most steps fetch nothing outside the API client.
  const { HttpClient } = await import("@actions/http-client");
  const dispatcher: Dispatcher | undefined = new HttpClient().getAgentDispatcher(String(url));
  if (!dispatcher) return fetch(url, init);
  const undici = await import("undici");
  // undici's own fetch, the only one its agent may be handed; its Response is the web Response.
  return (await undici.fetch(url, { ...(init as Parameters<typeof undici.fetch>[1]), dispatcher })) as unknown as Response;
}
