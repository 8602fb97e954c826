/** Finding a thread's newest session artifact through REST: newest wins, expired and fork-run artifacts never do. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActionsArtifactService } from "../../src/publish/artifacts.js";
import { sendJson, startLoopbackServer, type LoopbackServer } from "../support/fake-github-http.js";

const REPO_ID = 77;
const artifact = (id: number, created: string, extra: Record<string, unknown> = {}) => ({
  id,
  name: "agent-session-5",
  size_in_bytes: 10,
  expired: false,
  created_at: created,
  workflow_run: { id: 900 + id, repository_id: REPO_ID, head_repository_id: REPO_ID },
  ...extra,
});

let api: LoopbackServer;
let answer: unknown;
beforeAll(async () => {
  api = await startLoopbackServer(({ res, path }) => {
    if (path !== "/repos/octo/repo/actions/artifacts") {
      sendJson(res, 404, { message: "Not Found" });
      return 404;
    }
    sendJson(res, 200, answer);
    return 200;
  });
});
afterAll(() => api?.close());

describe("ActionsArtifactService.findNewest", () => {
  const access = () => ({ token: "ghs_x", owner: "octo", repo: "repo", apiUrl: api.url });

  it("takes the newest artifact of a run of the repository itself", async () => {
    answer = {
      total_count: 4,
      artifacts: [
        artifact(1, "2026-01-01T00:00:00Z"),
        artifact(2, "2026-01-03T00:00:00Z", { workflow_run: { id: 902, repository_id: REPO_ID, head_repository_id: 999 } }),
        artifact(3, "2026-01-04T00:00:00Z", { expired: true }),
        artifact(4, "2026-01-02T00:00:00Z"),
      ],
    };
    const found = await new ActionsArtifactService().findNewest("agent-session-5", access());
    expect(found).toEqual({ id: 4, name: "agent-session-5", runId: 904, createdAt: "2026-01-02T00:00:00Z", size: 10 });
    const req = api.requests.at(-1)!;
    expect(req.query).toMatchObject({ name: "agent-session-5" });
    expect(req.authorization).toBe("token ghs_x");
  });

  it("finds nothing when there is nothing usable, and refuses a malformed answer", async () => {
    answer = { total_count: 0, artifacts: [] };
    expect(await new ActionsArtifactService().findNewest("agent-session-5", access())).toBeUndefined();
    answer = { artifacts: [{ id: "x" }] };
    await expect(new ActionsArtifactService().findNewest("agent-session-5", access())).rejects.toThrow(/"id"[\s\S]*expected number|expected number[\s\S]*"id"/);
  });
});
