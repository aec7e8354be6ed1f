// Pi's own compaction preparation, loaded from the installed package. `prepareCompaction` and the file-list
// helpers are not re-exported from the package root, so the lab loads their module by file URL next to the
// root entry: the native row then cuts and lists files exactly as Pi does, not as we think Pi does.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { SessionEntry } from "../log/entries.ts";

export interface PiCompactionSettings {
  enabled: boolean;
  reserveTokens: number;
  keepRecentTokens: number;
}

/** The fields of Pi's CompactionPreparation the lab uses. */
export interface PiPreparation {
  firstKeptEntryId: string;
  messagesToSummarize: AgentMessage[];
  turnPrefixMessages: AgentMessage[];
  isSplitTurn: boolean;
  tokensBefore: number;
  previousSummary?: string;
  fileOps: { read: Set<string>; written: Set<string>; edited: Set<string> };
}

export interface PiCompactionInternals {
  prepareCompaction(pathEntries: SessionEntry[], settings: PiCompactionSettings): PiPreparation | undefined;
  computeFileLists(fileOps: PiPreparation["fileOps"]): { readFiles: string[]; modifiedFiles: string[] };
  formatFileOperations(readFiles: string[], modifiedFiles: string[]): string;
  SUMMARIZATION_SYSTEM_PROMPT: string;
}

let loaded: Promise<PiCompactionInternals> | undefined;

/** Load Pi's compaction internals once. Throws with a clear message if a Pi upgrade moved them. */
export function piCompaction(): Promise<PiCompactionInternals> {
  loaded ??= (async () => {
    const root = import.meta.resolve("@earendil-works/pi-coding-agent");
    const compaction = (await import(new URL("./core/compaction/compaction.js", root).href)) as Record<string, unknown>;
    const utils = (await import(new URL("./core/compaction/utils.js", root).href)) as Record<string, unknown>;
    const api = {
      prepareCompaction: compaction.prepareCompaction,
      computeFileLists: utils.computeFileLists,
      formatFileOperations: utils.formatFileOperations,
      SUMMARIZATION_SYSTEM_PROMPT: utils.SUMMARIZATION_SYSTEM_PROMPT,
    };
    for (const [name, value] of Object.entries(api)) {
      if (value === undefined)
        throw new Error(`lab: Pi's compaction module no longer provides ${name}; update src/lab/pi-internals.ts`);
    }
    return api as unknown as PiCompactionInternals;
  })();
  return loaded;
}
