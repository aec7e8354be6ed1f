// `pi-context-ledger show <session.jsonl>`: the ledger as the extension sees it: our facts (folds,
// compactions, checkpoints, notices), a timeline of the active branch, and what the model sees versus what
// stays hidden in the file. Malformed lines are listed with their line numbers.
import { parseArgs } from "node:util";
import { loadSessionFile } from "../../host/session-file.ts";
import { isLedgerCompaction, isLedgerEntry, type SessionEntry, textOf } from "../../log/entries.ts";
import { isFoldEntry, LEDGER_FACTS } from "../../strategies/catalog.ts";
import { isRevokedMessage, reduceBranch, type LedgerState } from "../../projection/ledger-state.ts";
import { entryMessages, lookupOf, projectBranch } from "../../projection/project.ts";
import { RangeMask } from "../../projection/ranges.ts";
import { PLUGINS } from "../../strategies/registry.ts";
import { estimateMessagesTokens } from "../../projection/tokens.ts";
import { firstLine, InputError } from "../errors.ts";
import { piCore } from "../pi-internals.ts";
import { sessionFiles } from "../inputs.ts";
import { kTokens } from "../table.ts";
import { terminalJson, terminalLines, terminalSafe } from "../terminal-text.ts";
import { checkedBranch } from "../tree-check.ts";

const USAGE = `Usage: pi-context-ledger show <session.jsonl> [--json]

Prints the ledger of one session: this package's facts, the timeline of the active branch, and how many
entries and tokens the model sees versus how many stay hidden (compacted or folded) in the file.
  --json   print the same as JSON
`;

function oneLine(text: string, max = 90): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** What `show` reports about one session. */
export interface ShowReport {
  path: string;
  entries: number;
  branchEntries: number;
  offBranch: number;
  malformedLines: { line: number; reason: string }[];
  unknownTypes: Record<string, number>;
  /** What is wrong with the session tree (cycles, duplicate ids, dangling parents), one line each. */
  treeProblems: string[];
  facts: { id: string; type: string; what: string }[];
  timeline: { id: string; timestamp: string; what: string }[];
  visible: { entries: number; tokens: number };
  /**
   * Entries hidden in the file: cut by compactions, hidden by folds, under the other kinds of range (by their name:
   * tool summaries, digests), and the summaries of acts a restore withdrew.
   */
  hidden: { compacted: number; folded: number; ranges: Record<string, number>; withdrawn: number; tokens: number };
}

/** One mask per kind of range on the branch (fold, tool summary, digest), named as the registry names the fact. */
function rangeMasks(branch: readonly SessionEntry[], state: LedgerState): { word: string; mask: RangeMask }[] {
  const byWord = new Map<string, LedgerState["ranges"][number][]>();
  const index = new Map(branch.map((e) => [e.id, e] as const));
  for (const rule of state.ranges) {
    const entry = index.get(rule.entryId);
    const type = entry?.type === "custom_message" ? entry.customType : undefined;
    let word = "range";
    for (const strategy of PLUGINS) if (type !== undefined && strategy.facts?.[type]) word = strategy.facts[type];
    byWord.set(word, [...(byWord.get(word) ?? []), rule]);
  }
  const lookup = lookupOf(branch);
  return [...byWord].map(([word, rules]) => ({ word, mask: new RangeMask(rules, lookup, LEDGER_FACTS) }));
}

/** Build the report from loaded entries (pure apart from the loading done by the caller). */
export function showReport(
  path: string,
  entries: readonly SessionEntry[],
  malformedLines: ShowReport["malformedLines"],
  unknownTypes: Record<string, number>,
): ShowReport {
  const { branch, problems } = checkedBranch(entries);
  const state = reduceBranch(branch, LEDGER_FACTS);
  const projection = projectBranch(branch, LEDGER_FACTS, state);
  const projected = new Map(projection.entries.map((p) => [p.sourceEntry.id, p]));
  const facts: ShowReport["facts"] = [];
  const timeline: ShowReport["timeline"] = [];
  const labels = state.labels;
  let compacted = 0;
  let folded = 0;
  let withdrawn = 0;
  const ranges: Record<string, number> = {};
  let hiddenTokens = 0;
  let visibleEntries = 0;
  const masks = rangeMasks(branch, state);
  branch.forEach((entry, at) => {
    const own = entryMessages(entry);
    const p = projected.get(entry.id);
    if (own.length && entry.type !== "compaction") {
      if (!p) {
        compacted++;
        hiddenTokens += estimateMessagesTokens(own);
      } else if (p.folded) {
        // Say what hid it: a fold, another kind of range, or a restore that withdrew the act's own summary.
        const word = isRevokedMessage(entry, state, LEDGER_FACTS)
          ? undefined
          : masks.find((m) => m.mask.hides(entry, at))?.word;
        if (word === undefined) withdrawn++;
        else if (word === "fold") folded++;
        else ranges[word] = (ranges[word] ?? 0) + 1;
        hiddenTokens += estimateMessagesTokens(own);
      } else visibleEntries++;
    }
    if (isFoldEntry(entry)) {
      const r = entry.details!.range;
      facts.push({
        id: entry.id,
        type: "fold",
        what: `hides (${r.afterId ?? "start"}, ${r.throughId}]${r.keepToolResultsOf ? ` keeping results of ${r.keepToolResultsOf}` : ""}: ${oneLine(textOf(entry.content), 70)}`,
      });
    } else if (entry.type === "compaction") {
      const strategy = isLedgerCompaction(entry) ? entry.details!.strategy : "native";
      facts.push({
        id: entry.id,
        type: `compaction (${strategy})`,
        what: `keeps from ${entry.firstKeptEntryId ?? "nothing"}, ${entry.tokensBefore} tokens before, summary ${kTokens(Math.ceil(entry.summary.length / 4))} tokens`,
      });
    } else if (isLedgerEntry(entry) && (entry.type === "custom" || entry.type === "custom_message")) {
      facts.push({
        id: entry.id,
        type: entry.customType,
        what:
          entry.type === "custom_message"
            ? oneLine(textOf(entry.content), 80)
            : oneLine(JSON.stringify(entry.data ?? {}), 80),
      });
    }
    if (labels[entry.id]) facts.push({ id: entry.id, type: "label", what: `label "${labels[entry.id]}"` });
    if (entry.type === "message" && entry.message.role === "user")
      timeline.push({
        id: entry.id,
        timestamp: entry.timestamp,
        what: `user: ${oneLine(textOf(entry.message.content))}`,
      });
    else if (entry.type === "compaction" || isFoldEntry(entry))
      timeline.push({ id: entry.id, timestamp: entry.timestamp, what: facts[facts.length - 1]?.type ?? entry.type });
    else if (entry.type === "model_change")
      timeline.push({ id: entry.id, timestamp: entry.timestamp, what: `model: ${entry.provider}/${entry.modelId}` });
    else if (entry.type === "branch_summary")
      timeline.push({ id: entry.id, timestamp: entry.timestamp, what: `branch summary from ${entry.fromId}` });
  });
  return {
    path,
    entries: entries.length,
    branchEntries: branch.length,
    offBranch: entries.length - branch.length,
    malformedLines,
    unknownTypes,
    treeProblems: problems,
    facts,
    timeline,
    visible: { entries: visibleEntries, tokens: estimateMessagesTokens(projection.messages) },
    hidden: { compacted, folded, ranges, withdrawn, tokens: hiddenTokens },
  };
}

/** Plain-text rendering of a show report. */
export function renderShow(report: ShowReport): string {
  const lines = [
    `${terminalSafe(report.path)}`,
    `${report.entries} entries (${report.branchEntries} on the active branch, ${report.offBranch} on other branches)`,
  ];
  if (report.malformedLines.length) {
    lines.push(`malformed lines skipped: ${report.malformedLines.length}`);
    for (const d of report.malformedLines) lines.push(`  line ${d.line}: ${terminalSafe(d.reason)}`);
  }
  const unknown = Object.entries(report.unknownTypes);
  if (unknown.length)
    lines.push(`unknown entry types: ${unknown.map(([t, n]) => `${terminalSafe(t)} ×${n}`).join(", ")}`);
  for (const problem of report.treeProblems) lines.push(`tree: ${problem}`);
  lines.push(
    ``,
    `model view: ${report.visible.entries} entries visible, ${kTokens(report.visible.tokens)} tokens`,
    `hidden in the file: ${report.hidden.compacted} compacted, ${report.hidden.folded} folded${Object.entries(
      report.hidden.ranges,
    )
      .map(([word, n]) => `, ${n} under ${word}s`)
      .join(
        "",
      )}${report.hidden.withdrawn ? `, ${report.hidden.withdrawn} withdrawn by restores` : ""} (${kTokens(report.hidden.tokens)} tokens)`,
    ``,
    `facts (${report.facts.length}):`,
  );
  if (!report.facts.length) lines.push(`  none: no compactions, folds or labels on this branch`);
  for (const f of report.facts) lines.push(`  ${terminalSafe(f.id)}  ${terminalSafe(f.type)}: ${terminalSafe(f.what)}`);
  lines.push(``, `timeline (${report.timeline.length}):`);
  for (const t of report.timeline)
    lines.push(
      `  ${terminalSafe(String(t.timestamp).slice(0, 19).replace("T", " "))}  ${terminalSafe(t.id)}  ${terminalSafe(t.what)}`,
    );
  // Every line passes through terminalLines: nothing from the file reaches the terminal raw.
  return `${terminalLines(lines.join("\n"))}\n`;
}

export async function runShow(argv: readonly string[]): Promise<number> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
    }));
    if (!values.help && positionals.length !== 1) throw new InputError(`expected one session file (see show --help)`);
  } catch (error) {
    process.stderr.write(`show: ${terminalSafe(firstLine(error))}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  let files: string[];
  try {
    files = await sessionFiles(positionals);
  } catch (error) {
    if (error instanceof InputError) {
      process.stderr.write(`show: ${terminalSafe(error.message)}\n`);
      return 2;
    }
    throw error;
  }
  const loaded = await loadSessionFile(files[0], undefined, (await piCore()).migrateSessionEntries);
  const report = showReport(positionals[0], loaded.entries, loaded.diagnostics, loaded.unknownTypes);
  process.stdout.write(values.json ? `${terminalJson(JSON.stringify(report, null, 1))}\n` : renderShow(report));
  return 0;
}
