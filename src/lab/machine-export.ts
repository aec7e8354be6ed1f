// Exports every statechart as JSON (XState's own definition) and a Mermaid state diagram, for docs and review.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AnyStateMachine } from "xstate";
import { compactionMachine } from "../../machines/compaction.machine.ts";

/** Every machine of the package, by file stem. */
export const MACHINES: Record<string, AnyStateMachine> = { compaction: compactionMachine };

interface NodeLike {
  key: string;
  type: string;
  description?: string;
  states: Record<string, NodeLike>;
  transitions: Map<string, { target?: readonly { key: string }[]; guard?: unknown }[]>;
  always?: readonly { target?: readonly { key: string }[]; guard?: unknown }[];
  invoke: readonly { src: unknown }[];
}

/** A guard as a label: its name, then the values of static params (`routedTo native`); computed params stay unnamed. */
function guardName(guard: unknown): string {
  if (!guard) return "";
  if (typeof guard === "string") return ` [${guard}]`;
  const { type, params } = guard as { type?: unknown; params?: unknown };
  if (typeof type !== "string") return " [guard]";
  const values =
    params && typeof params === "object"
      ? Object.values(params).filter((v) => typeof v === "string" || typeof v === "number")
      : [];
  return ` [${[type, ...values].join(" ")}]`;
}

/**
 * Free text as Mermaid reads it on one line: `;` would end the statement (each following word becomes a stray
 * state) and `:` splits a label, so both become Mermaid entity codes, which render as the original characters.
 */
function mermaidText(text: string): string {
  return text.replace(/\s+/g, " ").replace(/;/g, "#59;").replace(/:/g, "#58;");
}

/**
 * The authored definition as JSON: unlike `machine.toJSON()`, it keeps eventless (`always`) transitions and their
 * guards, so the Stately editor and inspector show automatic routing. Implementations appear by name.
 */
export function definitionJson(machine: AnyStateMachine): unknown {
  return JSON.parse(
    JSON.stringify(machine.config, (_key, value: unknown) =>
      typeof value === "function" ? `[${(value as { name?: string }).name || "inline"}]` : value,
    ),
  );
}

/** Mermaid `stateDiagram-v2` text for a machine: states, descriptions as notes, guarded transitions. */
export function toMermaid(machine: AnyStateMachine): string {
  const root = machine.root as unknown as NodeLike & { initial?: { target: readonly { key: string }[] } };
  const lines = ["stateDiagram-v2"];
  const initial = (machine.root as unknown as { initial?: { target?: readonly { key: string }[] } }).initial
    ?.target?.[0]?.key;
  if (initial) lines.push(`  [*] --> ${initial}`);
  for (const [key, node] of Object.entries(root.states)) {
    if (node.description) lines.push(`  ${key} : ${key}`, `  note right of ${key} : ${mermaidText(node.description)}`);
    for (const t of node.always ?? [])
      for (const target of t.target ?? []) lines.push(`  ${key} --> ${target.key} : always${guardName(t.guard)}`);
    for (const [event, list] of node.transitions) {
      for (const t of list) {
        const label = event.startsWith("xstate.done.actor")
          ? "plan done"
          : event.startsWith("xstate.error.actor")
            ? "plan failed"
            : event;
        for (const target of t.target ?? []) lines.push(`  ${key} --> ${target.key} : ${label}${guardName(t.guard)}`);
      }
    }
    if (node.type === "final") lines.push(`  ${key} --> [*]`);
  }
  return `${lines.join("\n")}\n`;
}

/** The files an export writes, keyed by relative path. */
export function renderMachineFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [name, machine] of Object.entries(MACHINES)) {
    files[`${name}.machine.json`] = `${JSON.stringify(definitionJson(machine), null, 2)}\n`;
    files[`${name}.machine.mmd`] = toMermaid(machine);
  }
  return files;
}

/** Write the export to `dir` (docs/machines by default). Returns the paths written. */
export function exportMachines(dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  return Object.entries(renderMachineFiles()).map(([name, body]) => {
    writeFileSync(join(dir, name), body);
    return join(dir, name);
  });
}

/** Files under `dir` that differ from a fresh export (empty when up to date). */
export function staleMachineFiles(dir: string): string[] {
  return Object.entries(renderMachineFiles())
    .filter(([name, body]) => {
      try {
        return readFileSync(join(dir, name), "utf8") !== body;
      } catch {
        return true;
      }
    })
    .map(([name]) => name);
}
