/**
 * Issue 17 item 9 (limits), through dist/: a tampered run artifact given to
 * `phase: publish` (too many entries, a declared size over the limit, a
 * non-recursive zip bomb whose entries share one compressed stream, an entry
 * that inflates past its declared size), and a hostile agent in bwrap
 * filling its outputs/ folder past the outputs limit. On the host afterwards:
 * the step failed naming the limit, nothing from the archive is on disk, and
 * the uploaded run artifact holds no outputs/.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { deflateRawSync } from "node:zlib";
import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACT_LIMITS, OUTPUTS_LIMITS } from "../../src/publish/limits.js";
import { createZip, startFakeActionsResults, type FakeActionsResults } from "../support/fake-actions-results.js";
import { agentScript, cloneRepo, errors, makeRepo, REPOSITORY, RUN_ID, runJob } from "../artifacts/helpers.js";

let results: FakeActionsResults;
beforeAll(async () => {
  results = await startFakeActionsResults({ repository: REPOSITORY });
});
afterAll(() => results?.close());

const origin = makeRepo({ "a.txt": "a\n" });

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name));
}

/** A zip of `count` entries that all point at one local header whose deflated data inflates to `size` zero bytes. */
function overlappingZip(count: number, size: number): Buffer {
  const raw = Buffer.alloc(size);
  const data = deflateRawSync(raw);
  const crc = zlib.crc32(raw);
  const name = Buffer.from("f0");
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(size, 22);
  local.writeUInt16LE(name.length, 26);
  const centrals: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    const n = Buffer.from(`f${i}`);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(0x0314, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(8, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(data.length, 20);
    c.writeUInt32LE(size, 24);
    c.writeUInt16LE(n.length, 28);
    c.writeUInt32LE((0o100644 << 16) >>> 0, 38);
    c.writeUInt32LE(0, 42);
    centrals.push(c, n);
  }
  const cd = Buffer.concat(centrals);
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(count, 8);
  eocd.writeUInt16LE(count, 10);
  eocd.writeUInt32LE(cd.length, 12);
  const dataEnd = local.length + name.length + data.length;
  eocd.writeUInt32LE(dataEnd, 16);
  return Buffer.concat([local, name, data, cd, eocd]);
}

/** Set the declared (uncompressed) size of the central directory entry `name`. */
function declareSize(zip: Buffer, name: string, size: number): Buffer {
  for (let p = 0; p < zip.length - 46; p++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) continue;
    const len = zip.readUInt16LE(p + 28);
    if (zip.toString("utf8", p + 46, p + 46 + len) === name) zip.writeUInt32LE(size >>> 0, p + 24);
  }
  return zip;
}

async function publishArtifact(runId: number, zip: Buffer) {
  results.addArtifact({ name: `agent-run-${runId}-1`, runId, repository: REPOSITORY, zip });
  const publish = await runJob({ results, workspace: cloneRepo(origin), runtime: { runId, job: "publish" }, inputs: { agent: "command", "agent-command": "false", phase: "publish" } });
  return { publish, extracted: filesUnder(publish.runnerTemp) };
}

describe("a tampered run artifact given to phase: publish", () => {
  const bigEntry = (files: string[]) => files.filter((f) => statSync(f).size >= 1024 * 1024);

  it(`with more than ${ARTIFACT_LIMITS.maxEntries} entries is refused, naming the limit`, async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i <= ARTIFACT_LIMITS.maxEntries; i++) files[`outputs/f${i}.txt`] = "x";
    const { publish, extracted } = await publishArtifact(RUN_ID + 301, createZip(files));
    expect(publish.exitCode).toBe(1);
    expect(errors(publish)[0]).toMatch(/The artifact 'agent-run-\d+-1' was refused: it has 10001 entries, more than 10,000 \(the limit on files and folders\)/);
    expect(extracted.filter((f) => /\/outputs\/f\d+\.txt$/.test(f))).toEqual([]);
    expect(publish.outputs).toEqual({});
  });

  it("declaring more than 2 GiB unpacked is refused before anything is written", async () => {
    const zip = declareSize(declareSize(createZip({ "result.json": "{}", "a.bin": "a", "b.bin": "b" }), "a.bin", 0x60000000), "b.bin", 0x60000000);
    const { publish, extracted } = await publishArtifact(RUN_ID + 302, zip);
    expect(publish.exitCode).toBe(1);
    expect(errors(publish)[0]).toMatch(/was refused: it unpacks to 3 GiB, more than the limit of 2 GiB/);
    expect(extracted.filter((f) => /\/(a|b)\.bin$/.test(f))).toEqual([]);
  });

  it("a zip bomb of entries sharing one compressed stream is refused, nothing inflated", async () => {
    // 40 entries × 16 MiB from one ~16 KiB stream: 640 MiB on disk without the overlap check.
    const { publish, extracted } = await publishArtifact(RUN_ID + 303, overlappingZip(40, 16 * 1024 * 1024));
    expect(publish.exitCode).toBe(1);
    expect(errors(publish)[0]).toMatch(/was refused: the entry 'f\d+' overlaps another entry's data \(a zip bomb\)/);
    expect(bigEntry(extracted)).toEqual([]);
  });

  it("an entry inflating past its declared size is cut off and what was written is removed", async () => {
    const zip = declareSize(createZip({ "result.json": "{}", "patch.diff": "", "bomb.bin": Buffer.alloc(32 * 1024 * 1024) }), "bomb.bin", 1024);
    const { publish, extracted } = await publishArtifact(RUN_ID + 304, zip);
    expect(publish.exitCode).toBe(1);
    expect(errors(publish)[0]).toMatch(/was refused: the entry 'bomb\.bin' is larger than it declares/);
    expect(extracted.filter((f) => /\/(bomb\.bin|result\.json|patch\.diff)$/.test(f))).toEqual([]);
  });
});

describe("a hostile agent filling outputs/", () => {
  const run = (runId: number, body: string) =>
    runJob({
      results,
      workspace: cloneRepo(origin),
      runtime: { runId, job: "agent" },
      inputs: { agent: "command", "agent-command": agentScript(body), prompt: "fill", sandbox: "bwrap", comment: "none" },
    });

  it(`more than ${OUTPUTS_LIMITS.maxEntries} files: outputs/ is left out of the artifact, the rest uploads, the warning names the limit`, async () => {
    const main = await run(RUN_ID + 311, `cd "$AGENT_OUTPUT_DIR" && for i in $(seq 0 ${OUTPUTS_LIMITS.maxEntries}); do : > f$i; done; echo done`);
    expect(main.log).toMatch(/outputs\/ \(all of it: it holds more than 5,000 files and folders, over the outputs limit of 1 GiB \/ 5,000 entries/);
    const [artifact] = results.artifacts({ runId: RUN_ID + 311 });
    const names = results.artifactFiles(artifact!.id);
    expect(names).toContain("result.json");
    expect(names.filter((n) => n.startsWith("outputs/"))).toEqual([]);
  });

  it("a sparse file over 1 GiB: outputs/ is left out, never read", async () => {
    const main = await run(RUN_ID + 312, `truncate -s 3G "$AGENT_OUTPUT_DIR/huge.bin"; echo report > "$AGENT_OUTPUT_DIR/report.md"; echo done`);
    expect(main.log).toMatch(/its files add up to more than 1 GiB, over the outputs limit/);
    const [artifact] = results.artifacts({ runId: RUN_ID + 312 });
    expect(results.artifactFiles(artifact!.id).filter((n) => n.startsWith("outputs/"))).toEqual([]);
  });

  it("within the limits, outputs/ is uploaded as before", async () => {
    await run(RUN_ID + 313, `echo report > "$AGENT_OUTPUT_DIR/report.md"; echo done`);
    const [artifact] = results.artifacts({ runId: RUN_ID + 313 });
    expect(results.artifactFiles(artifact!.id)).toContain("outputs/report.md");
  });
});
