// Pi's own compaction preparation, loaded from the installed package. `prepareCompaction` and the file-list
// helpers are not re-exported from the package root, so the lab loads their module by file URL next to the
// root entry: the native row then cuts and lists files exactly as Pi does, not as we think Pi does. The few
// root exports the lab calls are loaded the same way (see piCore), so the lab never loads all of Pi.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type {
  buildSessionProjection,
  convertToLlm,
  migrateSessionEntries,
  serializeConversation,
} from "@earendil-works/pi-coding-agent";
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

/** One of Pi's own modules, by its path next to the package root (no root import: that loads all of Pi). */
async function piModule(path: string): Promise<Record<string, unknown>> {
  const root = import.meta.resolve("@earendil-works/pi-coding-agent");
  return (await import(new URL(path, root).href)) as Record<string, unknown>;
}

/** `api` as `T` once every member is there, else a clear error naming the member a Pi upgrade moved. */
function checked<T>(api: Record<string, unknown>, what: string, present = (value: unknown) => value !== undefined): T {
  for (const [name, value] of Object.entries(api)) {
    if (!present(value)) throw new Error(`lab: ${what} no longer provide ${name}; update src/lab/pi-internals.ts`);
  }
  return api as T;
}

let loaded: Promise<PiCompactionInternals> | undefined;

/** Load Pi's compaction internals once. Throws with a clear message if a Pi upgrade moved them. */
export function piCompaction(): Promise<PiCompactionInternals> {
  loaded ??= (async () => {
    const [compaction, utils] = await Promise.all([
      piModule("./core/compaction/compaction.js"),
      piModule("./core/compaction/utils.js"),
    ]);
    return checked<PiCompactionInternals>(
      {
        prepareCompaction: compaction.prepareCompaction,
        computeFileLists: utils.computeFileLists,
        formatFileOperations: utils.formatFileOperations,
        SUMMARIZATION_SYSTEM_PROMPT: utils.SUMMARIZATION_SYSTEM_PROMPT,
      },
      "Pi's compaction modules",
    );
  })();
  return loaded;
}

/** The functions of Pi's public API the lab calls, taken from the modules that define them. */
export interface PiCoreFunctions {
  convertToLlm: typeof convertToLlm;
  serializeConversation: typeof serializeConversation;
  migrateSessionEntries: typeof migrateSessionEntries;
  buildSessionProjection: typeof buildSessionProjection;
}

let core: Promise<PiCoreFunctions> | undefined;

/**
 * Load Pi's message conversion, conversation serializer, session migration and projection from their own modules, once. They
 * are the package root's exports (the same module instances the root re-exports), but importing the root loads
 * all of Pi (its terminal UI, every provider), which cost each lab process and each worker about two CPU seconds
 * before the first entry was read. Throws with a clear message if a Pi upgrade moved them.
 */
export function piCore(): Promise<PiCoreFunctions> {
  core ??= (async () => {
    const [messages, utils, sessions] = await Promise.all([
      piModule("./core/messages.js"),
      piModule("./core/compaction/utils.js"),
      piModule("./core/session-manager.js"),
    ]);
    return checked<PiCoreFunctions>(
      {
        convertToLlm: messages.convertToLlm,
        serializeConversation: utils.serializeConversation,
        migrateSessionEntries: sessions.migrateSessionEntries,
        buildSessionProjection: sessions.buildSessionProjection,
      },
      "Pi's modules",
      (value) => typeof value === "function",
    );
  })();
  return core;
}

/**
 * The installed Pi's `VERSION`, from the module that defines it (the root re-exports it), so the CLI's version check
 * does not load all of Pi either. A Pi laid out otherwise (older or newer) is asked through its root.
 */
export async function installedPiVersion(): Promise<unknown> {
  try {
    const config = await piModule("./config.js");
    if (config.VERSION !== undefined) return config.VERSION;
  } catch {
    // Not this layout: the root answers for any Pi.
  }
  return ((await import("@earendil-works/pi-coding-agent")) as { VERSION?: unknown }).VERSION;
}
