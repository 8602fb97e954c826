/**
 * Credentials for git over HTTPS, as environment for one git process:
 * GIT_CONFIG_COUNT/KEY/VALUE add `http.<server>/.extraheader` for that
 * process only. The token is never on argv (visible in `ps`), never in a
 * remote URL, and never written into any repository's git config, so the
 * agent — which runs before any push — cannot find it in the workspace.
 */
export function gitAuthEnv(token: string, serverUrl: string): Record<string, string> {
  if (!token) return {};
  const basic = Buffer.from(`x-access-token:${token}`, "utf8").toString("base64");
  return {
    GIT_CONFIG_COUNT: "1",
    GIT_CONFIG_KEY_0: `http.${serverUrl.replace(/\/+$/, "")}/.extraheader`,
    GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
  };
}
