/** One reason to hold a run's publication back; names where and what kind, never the value. */
export interface ThreatFinding {
  kind: "secret" | "run-secret" | "protected-file" | "threat-verdict" | "detection-failed" | "scan-incomplete";
  /** "patch", "final message", "safe output 3 (create-issue)". */
  where: string;
  /** The repository path, for findings in the patch. */
  file?: string;
  /** The rule that matched ("GITHUB_TOKEN (line 4)"), or why a file is protected. */
  detail: string;
}
