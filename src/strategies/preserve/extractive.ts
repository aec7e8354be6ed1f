// A model-free checkpoint writer: the Tool Context format filled from the delta itself (files read and changed,
// commands with their exit status and test counts, error signatures). Deterministic; pure: no I/O.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { textOf } from "../../log/entries.ts";
import type { DeltaUnit } from "../shared/delta.ts";
import { TOOL_CONTEXT_HEADING } from "./prompt.ts";

const MAX_LINE = 160;
const MAX_ITEMS = 12;
/** Result lines worth keeping from a command's output: test and build tallies. */
const TALLY = /\b\d+\s+(?:passed|failed|failing|passing|skipped|ignored|pending|errors?|warnings?|tests?|todo)\b/i;
/** Lines that start like an error report (preferred as the signature). */
const ERROR_HEAD = /^(?:[\w.]*(?:Error|Exception)\b|error\b|fatal\b|panic\b|FAIL\b|E\d{3,})/i;
/** Lines that name an error somewhere. */
const ERROR_LINE = /\b(?:error|exception|failed|failure|fatal|panic|cannot|not found|undefined)\b|^E\d|✗|FAIL\b/i;
const EXIT = /Command exited with code (\d+)/;

function clip(text: string, max = MAX_LINE): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function code(text: string): string {
  return `\`${clip(text).replace(/`/g, "'")}\``;
}

interface Call {
  name: string;
  args: Record<string, unknown>;
  result?: { text: string; isError: boolean };
}

function callsOf(messages: readonly AgentMessage[]): Call[] {
  const calls: Call[] = [];
  const byId = new Map<string, Call>();
  for (const message of messages) {
    if (message.role === "assistant") {
      for (const block of message.content ?? []) {
        if (block.type !== "toolCall") continue;
        const call: Call = { name: block.name, args: (block.arguments ?? {}) as Record<string, unknown> };
        calls.push(call);
        byId.set(block.id, call);
      }
    } else if (message.role === "toolResult") {
      const result = { text: textOf(message.content), isError: message.isError === true };
      const call = byId.get(message.toolCallId);
      if (call) call.result = result;
      else calls.push({ name: message.toolName, args: {}, result });
    }
  }
  return calls;
}

/** First line that looks like an error, else the first non-empty line. */
function errorSignature(text: string): string | undefined {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const hit =
    lines.find((l) => ERROR_HEAD.test(l)) ??
    lines.find((l) => ERROR_LINE.test(l) && !EXIT.test(l)) ??
    lines.find((l) => !EXIT.test(l)) ??
    lines[0];
  return hit ? clip(hit) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === "string" && value ? value : undefined;
}

class Section {
  readonly items: string[] = [];
  private readonly seen = new Set<string>();
  add(item: string): void {
    if (this.seen.has(item)) return;
    this.seen.add(item);
    this.items.push(item);
  }
  render(title: string): string {
    const shown = this.items.slice(0, MAX_ITEMS).map((i) => `- ${i}`);
    if (this.items.length > MAX_ITEMS) shown.push(`- (${this.items.length - MAX_ITEMS} more)`);
    return `#### ${title}\n${shown.length ? shown.join("\n") : "- (none)"}`;
  }
}

function describe(units: readonly DeltaUnit[]): { findings: Section; changes: Section; unresolved: Section } {
  const findings = new Section();
  const changes = new Section();
  const unresolved = new Section();
  const messages = units.flatMap((u) => u.messages);
  for (const call of callsOf(messages)) {
    const path = str(call.args.path) ?? str(call.args.file_path);
    const failed = call.result?.isError === true;
    switch (call.name) {
      case "read":
        if (path) findings.add(`Read ${code(path)}${failed ? " (failed)" : ""}`);
        break;
      case "edit":
      case "write":
        if (path) changes.add(`${call.name === "edit" ? "Edited" : "Wrote"} ${code(path)}${failed ? " (failed)" : ""}`);
        break;
      case "bash": {
        const command = str(call.args.command) ?? "(command)";
        const output = call.result?.text ?? "";
        const exit = EXIT.exec(output)?.[1] ?? (failed ? "error" : call.result ? "0" : "no result");
        const tallies = output
          .split("\n")
          .filter((l) => TALLY.test(l))
          .slice(-2)
          .map((l) => clip(l, 100));
        changes.add(`${code(command)}: exit ${exit}${tallies.length ? `; ${tallies.join("; ")}` : ""}`);
        break;
      }
      case "grep":
      case "find":
      case "ls": {
        const what = str(call.args.pattern) ?? path ?? "";
        findings.add(`${call.name} ${code(what)}${path && what !== path ? ` in ${code(path)}` : ""}`);
        break;
      }
      default:
        findings.add(`${call.name} ${code(JSON.stringify(call.args))}`);
    }
    const exitCode = call.result ? EXIT.exec(call.result.text)?.[1] : undefined;
    if (call.result && (failed || (exitCode !== undefined && exitCode !== "0"))) {
      const signature = errorSignature(call.result.text);
      if (signature) unresolved.add(`${call.name}${path ? ` ${code(path)}` : ""}: ${signature}`);
    }
  }
  return { findings, changes, unresolved };
}

/**
 * Write a checkpoint body from the delta alone. The same units always give the same bytes (no clock, no ordering
 * by hash), so the lab and the fallback path are reproducible.
 */
export function writeExtractiveCheckpoint(units: readonly DeltaUnit[]): string {
  const ordinals = [...new Set(units.map((u) => u.ordinal))].sort((a, b) => a - b);
  const parts = [TOOL_CONTEXT_HEADING];
  for (const ordinal of ordinals) {
    const { findings, changes, unresolved } = describe(units.filter((u) => u.ordinal === ordinal));
    parts.push(
      `### User message ${ordinal}`,
      findings.render("Findings"),
      "",
      changes.render("Changes & Validation"),
      "",
      unresolved.render("Unresolved"),
      "",
    );
  }
  return parts.join("\n").trimEnd();
}
