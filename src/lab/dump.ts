// `--dump DIR`: the model view right after every act of every row, as the provider would receive it
// (Pi's convertToLlm), one JSON line per act in DIR/<NN>-<session>/<row>.jsonl, so a user can read exactly
// what the model would have seen.
import { createWriteStream, rmSync, type WriteStream } from "node:fs";
import { lstat, mkdir, open, stat, unlink } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import { InputError } from "./errors.ts";
import { creationFailure } from "./inputs.ts";
import { type PiCoreFunctions, piCore } from "./pi-internals.ts";
import type { ActView } from "./replay.ts";

/**
 * Check (before a run) that DIR can hold the dump: an existing directory, or a new one in an existing parent,
 * in which a file can be created (probed, so that /proc or a read-only mount fails now, not mid-replay). A link
 * is refused, not followed.
 */
export async function prepareDumpDir(raw: string): Promise<string> {
  const dir = resolve(raw);
  const info = await lstat(dir).catch(() => undefined);
  if (info?.isSymbolicLink()) throw new InputError(`cannot write --dump ${raw}: it is a symbolic link (not followed)`);
  if (info && !info.isDirectory()) throw new InputError(`cannot write --dump ${raw}: not a directory`);
  if (!info) {
    const parent = await stat(dirname(dir)).catch(() => undefined);
    if (!parent?.isDirectory())
      throw new InputError(`cannot write --dump ${raw}: directory ${dirname(dir)} does not exist`);
    await mkdir(dir).catch((error: unknown) => {
      throw new InputError(`cannot write --dump ${raw}: ${creationFailure(error, dirname(dir))}`);
    });
  }
  const probe = join(dir, `.probe-${process.pid}`);
  try {
    await (await open(probe, "wx")).close();
    await unlink(probe);
  } catch (error) {
    throw new InputError(`cannot write --dump ${raw}: ${creationFailure(error, dir)}`);
  }
  return dir;
}

/** A folder of the dump, made fresh: whatever a link or a file put there before is removed, never followed. */
async function freshFolder(path: string): Promise<void> {
  const info = await lstat(path).catch(() => undefined);
  if (info?.isDirectory()) return;
  if (info) await unlink(path);
  await mkdir(path);
}

/** A dump file created exclusively: an earlier run's file, or a link planted in its place, is removed first. */
function exclusiveStream(path: string): WriteStream {
  rmSync(path, { force: true });
  return createWriteStream(path, { flags: "wx" });
}

/** A file-system-safe name: letters, digits, dot, dash and underscore. */
function safeName(name: string): string {
  return (
    name
      .replace(/\.jsonl$/, "")
      .replace(/[^\w.-]+/g, "_")
      .slice(0, 80) || "session"
  );
}

/** One dump line. */
export interface DumpLine {
  session: string;
  row: string;
  label: string;
  act: number;
  kind: string;
  request: number;
  leafEntryId: string | null;
  tokens: number;
  messages: ReturnType<PiCoreFunctions["convertToLlm"]>;
}

/** A dump writer for one run: `session(i)` before each session, `act` for every act, `close` at the end. */
export function createDump(dir: string) {
  const files = new Map<string, WriteStream>();
  let folder = "";
  const write = (stream: WriteStream, line: string) =>
    new Promise<void>((ok, fail) => {
      stream.once("error", fail);
      if (stream.write(line)) {
        stream.off("error", fail);
        ok();
      } else
        stream.once("drain", () => {
          stream.off("error", fail);
          ok();
        });
    });
  const closeAll = async () => {
    await Promise.all([...files.values()].map((s) => new Promise<void>((ok) => s.end(ok))));
    files.clear();
  };
  return {
    async session(index: number, name: string): Promise<void> {
      await closeAll();
      folder = join(dir, `${String(index + 1).padStart(2, "0")}-${safeName(name)}`);
      await freshFolder(folder);
    },
    async act(view: ActView): Promise<void> {
      let stream = files.get(view.row.id);
      if (!stream) {
        stream = exclusiveStream(join(folder, `${safeName(view.row.id)}.jsonl`));
        files.set(view.row.id, stream);
      }
      const line: DumpLine = {
        session: view.session,
        row: view.row.id,
        label: view.row.label,
        act: view.act,
        kind: view.kind,
        request: view.request,
        leafEntryId: view.leafEntryId,
        tokens: view.tokens,
        messages: (await piCore()).convertToLlm((view.messages as AgentMessage[]).slice()),
      };
      await write(stream, `${JSON.stringify(line)}\n`);
    },
    close: closeAll,
  };
}
