/**
 * Issue #23, the leaks, through the action (dist/) and real bubblewrap: a
 * probe `command` agent runs on a runner where all three clouds' auth
 * actions have left their variables and files (google-github-actions/auth's
 * gha-creds-*.json in the workspace, a web identity token file, an Azure
 * federated token file), with cloud keys also given in `secrets`. It sees
 * none of the values, in its environment, any /proc/<pid>/environ, or any
 * file under HOME, TMPDIR or the workspace; it cannot change or remove the
 * credentials file; the host's file is intact after the run, and neither
 * the patch, the results (the artifact's content), the log nor the outputs
 * hold a value or the file.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { filesUnder, makeWorkspace } from "../agents/helpers.js";
import { attackReport } from "../support/attack-report.js";
import { runActionSteps, runStep } from "../support/harness.js";

const GHA_CREDS = JSON.stringify({
  type: "external_account",
  audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/gh",
  subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
  token_url: "https://sts.googleapis.com/v1/token",
  credential_source: {
    url: "https://pipelines.actions.example/idtoken/probe-request?audience=x",
    headers: { Authorization: "Bearer probeOidcRequestBearerInGhaCreds0123" },
    format: { type: "json", subject_token_field_name: "value" },
  },
});

/** Every value a cloud auth action leaves in the job; none may reach the agent. */
const VALUES = {
  awsKeyId: "AKIAPROBEKEYID000001",
  awsSecret: "probeAwsSecretAccessKey0123456789abcdef",
  awsSession: "probeAwsSessionToken0123456789",
  awsSecretInSecrets: "probeAwsSecretGivenInSecrets0123",
  webIdentity: "probeAwsWebIdentityJwt0123456789",
  googleProject: "probe-google-project-4711",
  cloudMl: "probe-cloud-ml-region-9",
  azureClient: "probe-azure-client-id-0123",
  azureSecret: "probeAzureClientSecret0123456789",
  azureToken: "probeAzureFederatedJwt0123456789",
  azureOpenAiKey: "probeAzureOpenAiKeyInSecrets0123",
  oidcUrl: "https://pipelines.actions.example/idtoken/probe-request",
  oidcBearer: "probeOidcRequestBearer0123456789",
  ghaCredsBearer: "probeOidcRequestBearerInGhaCreds0123",
};



describe("cloud credentials never reach the agent (bwrap)", () => {
  it("a probe agent with all three clouds' variables and files on the runner sees none of them", async () => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    const ghaCreds = path.join(ws, "gha-creds-5eed1234abcd.json");
    writeFileSync(ghaCreds, GHA_CREDS, { mode: 0o600 });
    mkdirSync(path.join(ws, "ci-tokens"));
    const awsToken = path.join(ws, "ci-tokens", "aws-web-identity");
    const azureToken = path.join(ws, "ci-tokens", "azure-federated");
    writeFileSync(awsToken, VALUES.webIdentity);
    writeFileSync(azureToken, VALUES.azureToken);
    const needles = Object.values(VALUES);

    const script = path.join(mkdtempSync(path.join(os.tmpdir(), "cloud-leak-agent-")), "probe.sh");
    writeFileSync(
      script,
      `#!/bin/bash
report() { echo "REPORT $1=$2"; }
needles=(${needles.map((n) => `'${n}'`).join(" ")})
dump=$( (env; cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n') )
hits=0; for n in "\${needles[@]}"; do grep -qF -- "$n" <<<"$dump" && hits=$((hits+1)); done
report env_hits $hits
report cloud_names $(grep -cE '^(AWS_|GOOGLE_|CLOUDSDK_|CLOUD_ML_|AZURE_|ACTIONS_ID_TOKEN_REQUEST_)' <<<"$(env)")
fh=0; for n in "\${needles[@]}"; do grep -rqaF -- "$n" "$HOME" "$TMPDIR" . 2>/dev/null && fh=$((fh+1)); done
report file_hits $fh
report gha_creds_bytes $(wc -c < gha-creds-5eed1234abcd.json)
report aws_token_bytes $(wc -c < ci-tokens/aws-web-identity)
echo tampered > gha-creds-5eed1234abcd.json 2>/dev/null && report overwrote 1 || report overwrote 0
rm -f gha-creds-5eed1234abcd.json 2>/dev/null; [ -e gha-creds-5eed1234abcd.json ] && report removed 0 || report removed 1
echo '{"type":"service_account"}' > gha-creds-agentmade.json
echo done > probe.txt
report done 1
`,
    );
    chmodSync(script, 0o755);

    const { main } = await runActionSteps({
      workspace: ws,
      inputs: {
        agent: "command",
        "agent-command": script,
        prompt: "probe",
        sandbox: "bwrap",
        secrets: `AZURE_OPENAI_API_KEY=${VALUES.azureOpenAiKey}\nAWS_SECRET_ACCESS_KEY=${VALUES.awsSecretInSecrets}\nTOOL_TOKEN=ordinary`,
      },
      env: {
        AWS_ACCESS_KEY_ID: VALUES.awsKeyId,
        AWS_SECRET_ACCESS_KEY: VALUES.awsSecret,
        AWS_SESSION_TOKEN: VALUES.awsSession,
        AWS_REGION: "eu-central-1",
        AWS_ROLE_ARN: "arn:aws:iam::123456789012:role/probe",
        AWS_WEB_IDENTITY_TOKEN_FILE: awsToken,
        GOOGLE_APPLICATION_CREDENTIALS: ghaCreds,
        GOOGLE_GHA_CREDS_PATH: ghaCreds,
        CLOUDSDK_AUTH_CREDENTIAL_FILE_OVERRIDE: ghaCreds,
        GOOGLE_CLOUD_PROJECT: VALUES.googleProject,
        CLOUD_ML_REGION: VALUES.cloudMl,
        AZURE_CLIENT_ID: VALUES.azureClient,
        AZURE_CLIENT_SECRET: VALUES.azureSecret,
        AZURE_TENANT_ID: "probe-tenant",
        AZURE_FEDERATED_TOKEN_FILE: azureToken,
        ACTIONS_ID_TOKEN_REQUEST_URL: VALUES.oidcUrl,
        ACTIONS_ID_TOKEN_REQUEST_TOKEN: VALUES.oidcBearer,
      },
    });
    const report = attackReport(main);
    expect(main.outputs.conclusion, main.log).toBe("success");
    expect(report).toMatchObject({
      done: "1",
      env_hits: "0",
      cloud_names: "0",
      file_hits: "0",
      gha_creds_bytes: "0",
      aws_token_bytes: "0",
      overwrote: "0",
      removed: "0",
    });

    // The host's files are as the auth actions wrote them.
    expect(readFileSync(ghaCreds, "utf8")).toBe(GHA_CREDS);
    expect(statSync(ghaCreds).mode & 0o777).toBe(0o600);
    expect(readFileSync(awsToken, "utf8")).toBe(VALUES.webIdentity);

    // Nothing of it in the patch, the results (the artifact's content), the log or the outputs.
    expect(JSON.parse(main.outputs["changed-files"]!)).toEqual(["probe.txt"]);
    const patch = readFileSync(main.outputs["patch-path"]!, "utf8");
    expect(patch).not.toContain("gha-creds");
    const results = path.dirname(main.outputs["patch-path"]!);
    const leaked = filesUnder(results).flatMap((f) => {
      const text = readFileSync(f, "latin1");
      return needles.filter((n) => text.includes(n)).map((n) => `${path.relative(results, f)}: ${n}`);
    });
    expect(leaked).toEqual([]);
    expect(filesUnder(results).map((f) => path.basename(f))).not.toContain("gha-creds-5eed1234abcd.json");
    const shown = [main.log, main.stderr, main.summary, JSON.stringify(main.outputs)].join("\n");
    for (const n of needles) expect(shown).not.toContain(n);
    // The secrets given as cloud keys were held back, and the log says so by name.
    expect(main.log).toMatch(/AZURE_OPENAI_API_KEY is a cloud credential; it stays on the runner/);
  });

  it("refuses before the agent starts when forward-env names a cloud credential", async () => {
    const ws = makeWorkspace({ "README.md": "hi\n" });
    const main = await runStep("main", {
      workspace: ws,
      inputs: { agent: "command", "agent-command": "touch started.txt", prompt: "p", sandbox: "bwrap", "forward-env": "ACTIONS_ID_TOKEN_REQUEST_TOKEN" },
      env: { ACTIONS_ID_TOKEN_REQUEST_TOKEN: VALUES.oidcBearer },
    });
    expect(main.exitCode).not.toBe(0);
    expect(main.log).toMatch(/Input 'forward-env': 'ACTIONS_ID_TOKEN_REQUEST_TOKEN' is a cloud credential variable/);
    expect(readdirSync(ws)).not.toContain("started.txt");
  });
});
