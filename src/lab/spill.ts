// Where the lab keeps what its replay need not hold in memory: superseded compactions of the simulated ledgers
// (rows/ledger-row.ts) and the long texts of the session being replayed (source-texts.ts). Pi's ledger lives on
// disk; the lab's lives in memory, so this text goes, as UTF-8, to one temporary file per process and is read back
// only when some code reads it. The file is private (0600) and unlinked as soon as it is open, so it disappears with
// the process, however the process ends; where a platform cannot unlink an open file it is removed at exit. Where
// no temporary file can be made (a read-only or full temporary directory), the text stays in memory deflated.
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { deflateRawSync, inflateRawSync } from "node:zlib";

interface SpillFile {
  fd: number;
  /** Bytes written so far: the offset of the next record. */
  size: number;
}

/** The process's spill file; null once making one failed (not tried again). */
let file: SpillFile | null | undefined;

function open(): SpillFile | null {
  if (file !== undefined) return file;
  let dir: string;
  let fd: number;
  try {
    dir = mkdtempSync(join(tmpdir(), "pi-context-ledger-lab-"));
    fd = openSync(join(dir, "superseded"), "w+", 0o600);
  } catch {
    file = null;
    return file;
  }
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    remove();
  } catch {
    process.once("exit", () => {
      closeSync(fd);
      remove();
    });
  }
  file = { fd, size: 0 };
  return file;
}

/** Write `text` out of memory; the returned function reads it back (each call reads the file again). */
export function spill(text: string): () => string {
  const out = open();
  // On disk the text is stored as it is: deflating it and inflating it at every read cost more CPU than the smaller
  // file saves (the file is no larger than the session's own texts). Held in memory, it is deflated, at the fastest level.
  if (out) return appendTo(out, Buffer.from(text, "utf8"));
  const bytes = deflateRawSync(text, { level: 1 });
  return () => inflateRawSync(bytes).toString("utf8");
}

// Its own function, so the reader's closure captures the offset and length only: closures made in one scope
// share its variables, and a reader next to `bytes` would keep every spilled buffer alive.
function appendTo(out: SpillFile, bytes: Buffer): () => string {
  const at = out.size;
  const length = bytes.length;
  let written = 0;
  while (written < length) written += writeSync(out.fd, bytes, written, length - written, at + written);
  out.size += length;
  const { fd } = out;
  return () => {
    const buffer = Buffer.allocUnsafe(length);
    let read = 0;
    while (read < length) {
      const got = readSync(fd, buffer, read, length - read, at + read);
      if (got === 0) throw new Error("the lab's spill file ended early");
      read += got;
    }
    return buffer.toString("utf8");
  };
}

/**
 * Replace `record[key]` by a property whose value is `read()` (a reader of spilled text, see `spill`). Assigning
 * to it stores the new value as a plain property again, so code that updates the field works as before.
 */
export function spillProperty(record: object, key: string, read: () => unknown): void {
  Object.defineProperty(record, key, {
    get: read,
    set(value: unknown) {
      Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
    },
    enumerable: true,
    configurable: true,
  });
}

/** Bytes written to the spill file by this process so far (tests check that text left memory). */
export function spilledBytes(): number {
  return file?.size ?? 0;
}
