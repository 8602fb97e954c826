/** Attachments as the agent (the prompt, the CLI) and the transcripts see them: what config/attachments.ts stages. */

/** One attachment as the agent sees it. */
export interface AttachmentFile {
  /** Absolute path inside the sandbox (in the read-only attachments folder). */
  path: string;
  /** The copy's file name (our own, e.g. `01-screen.png`). */
  name: string;
  /** By content: images and PDFs go to the CLI natively where it can take them; text is listed in the prompt. */
  kind: "image" | "pdf" | "text";
  mediaType: string;
  bytes: number;
}

/** The attachments folder (AGENT_ATTACHMENTS_DIR) and its files, in the order the prompt lists them. */
export interface Attachments {
  dir: string;
  files: AttachmentFile[];
}

/** An attachment as the transcripts show it; the file itself is in the artifact's attachments/. */
export interface TranscriptAttachment {
  /** The copy's name, our own (`01-screen.png`). */
  name: string;
  kind: "image" | "pdf" | "text";
  mediaType: string;
  bytes: number;
  /** Where it came from, one line. */
  source: string;
  /** A `data:` URI of the image, within the transcript's inline budget. */
  dataUri?: string;
}
