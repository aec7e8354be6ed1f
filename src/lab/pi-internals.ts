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
    const root = import.meta.resolve("@earendil-works/pi-coding-agent");
    const load = async (path: string) => (await import(new URL(path, root).href)) as Record<string, unknown>;
    const [messages, utils, sessions] = await Promise.all([
      load("./core/messages.js"),
      load("./core/compaction/utils.js"),
      load("./core/session-manager.js"),
    ]);
    const api = {
      convertToLlm: messages.convertToLlm,
      serializeConversation: utils.serializeConversation,
      migrateSessionEntries: sessions.migrateSessionEntries,
      buildSessionProjection: sessions.buildSessionProjection,
    };
    for (const [name, value] of Object.entries(api)) {
      if (typeof value !== "function")
        throw new Error(`lab: Pi's modules no longer provide ${name}; update src/lab/pi-internals.ts`);
    }
    return api as unknown as PiCoreFunctions;
  })();
  return core;
}

/**
 * The installed Pi's `VERSION`, from the module that defines it (the root re-exports it), so the CLI's version check
 * does not load all of Pi either. A Pi laid out otherwise (older or newer) is asked through its root.
 */
export async function installedPiVersion(): Promise<unknown> {
  const root = import.meta.resolve("@earendil-works/pi-coding-agent");
  try {
    const config = (await import(new URL("./config.js", root).href)) as { VERSION?: unknown };
    if (config.VERSION !== undefined) return config.VERSION;
  } catch {
    // Not this layout: the root answers for any Pi.
  }
  return ((await import("@earendil-works/pi-coding-agent")) as { VERSION?: unknown }).VERSION;
}
