/**
 * Cloud credentials, as the official auth actions leave them in a job: the
 * variable names that hold them and the files they write. Shared by the
 * input parser (refuses to forward them), the sandbox's env builder (never
 * passes them) and the sandbox backends and snapshots (hide the files).
 */

/**
 * Variables that hold, point to or mint cloud credentials:
 * aws-actions/configure-aws-credentials (`AWS_*`), google-github-actions/auth
 * (`GOOGLE_*`, `CLOUDSDK_*`, `CLOUD_ML_*` of Claude Code's Vertex mode),
 * azure/login and workload identity (`AZURE_*`), and the runner's OIDC token
 * request (`ACTIONS_ID_TOKEN_REQUEST_URL` / `_TOKEN`), with which anyone could
 * mint tokens for the workflow's cloud roles.
 */
const CLOUD_CREDENTIAL_NAME = /^(AWS_|GOOGLE_|CLOUDSDK_|CLOUD_ML_|AZURE_|ACTIONS_ID_TOKEN_REQUEST_)/i;

/** Whether a variable of this name may hold or lead to a cloud credential: never the agent's. */
export function isCloudCredentialName(name: string): boolean {
  return CLOUD_CREDENTIAL_NAME.test(name);
}

/** The prefixes, as the README and error messages name them. */
export const CLOUD_CREDENTIAL_PREFIXES = "AWS_*, GOOGLE_*, CLOUDSDK_*, CLOUD_ML_*, AZURE_*, ACTIONS_ID_TOKEN_REQUEST_*";

/**
 * The file google-github-actions/auth writes into the workspace
 * (`gha-creds-<hex>.json`): an `external_account` config holding the URL and
 * bearer of the job's OIDC token request.
 */
export const GHA_CREDS_FILE = /^gha-creds-[A-Za-z0-9_-]*\.json$/;

/** The same files as a git pathspec (anywhere in the tree), left out of every snapshot. */
export const GHA_CREDS_PATHSPEC = ":(top,exclude,glob)**/gha-creds-*.json";

/**
 * Variables that name a credentials file the auth actions write: the file is
 * hidden from the agent wherever it can see it (its content, not just the
 * variable, is the credential).
 */
export const CLOUD_CREDENTIAL_FILE_VARS = [
  "GOOGLE_APPLICATION_CREDENTIALS",
  "GOOGLE_GHA_CREDS_PATH",
  "CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE",
  "AWS_WEB_IDENTITY_TOKEN_FILE",
  "AWS_SHARED_CREDENTIALS_FILE",
  "AWS_CONFIG_FILE",
  "AZURE_FEDERATED_TOKEN_FILE",
  "AZURE_CLIENT_CERTIFICATE_PATH",
] as const;
