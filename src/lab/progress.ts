// Progress output: a redrawn bar on a terminal, plain lines otherwise (CI logs, pipes).
export interface Progress {
  start(label: string, index: number, count: number): void;
  update(done: number, total: number): void;
  finish(note: string): void;
}

export function createProgress(stream: NodeJS.WriteStream = process.stderr, quiet = false): Progress {
  if (quiet) return { start() {}, update() {}, finish() {} };
  let label = "";
  let prefix = "";
  let lastPercent = -1;
  if (stream.isTTY) {
    const width = 28;
    return {
      start(l, index, count) {
        label = l;
        prefix = `[${index + 1}/${count}]`;
        lastPercent = -1;
      },
      update(done, total) {
        const percent = total ? Math.floor((done / total) * 100) : 100;
        if (percent === lastPercent) return;
        lastPercent = percent;
        const filled = Math.round((percent / 100) * width);
        stream.write(
          `\r${prefix} ${"█".repeat(filled)}${"░".repeat(width - filled)} ${String(percent).padStart(3)}% ${label}\x1b[K`,
        );
      },
      finish(note) {
        stream.write(`\r${prefix} ${label}: ${note}\x1b[K\n`);
      },
    };
  }
  return {
    start(l, index, count) {
      label = l;
      prefix = `[${index + 1}/${count}]`;
      lastPercent = -1;
      stream.write(`${prefix} replaying ${label}\n`);
    },
    update(done, total) {
      // Plain mode: a line per quarter, enough to show life in a CI log.
      const quarter = total ? Math.floor((done / total) * 4) : 4;
      if (quarter === lastPercent || quarter === 0) return;
      lastPercent = quarter;
      stream.write(`${prefix} ${label}: ${quarter * 25}%\n`);
    },
    finish(note) {
      stream.write(`${prefix} ${label}: ${note}\n`);
    },
  };
}

/** Progress of a parallel run: a line per worker and an estimate of the time left for the whole run. */
export interface WorkerProgress {
  begin(sessions: number, bytes: number): void;
  start(worker: number, label: string, index: number, bytes: number): void;
  update(worker: number, done: number, total: number): void;
  finish(worker: number, note: string): void;
  end(): void;
}

/** "1m05s", "42s": an estimate, so whole seconds. */
function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

/**
 * On a terminal, a block of one line per worker and a last line with the run's share done and the time left,
 * redrawn in place; finished sessions are printed above it. Elsewhere, plain lines (CI logs, pipes). The estimate
 * counts bytes of session: whole files done, and the replayed share of the ones in progress.
 */
export function createWorkerProgress(
  workers: number,
  stream: NodeJS.WriteStream = process.stderr,
  quiet = false,
  now: () => number = () => performance.now(),
): WorkerProgress {
  const silent = { begin() {}, start() {}, update() {}, finish() {}, end() {} };
  if (quiet) return silent;
  const slots = Array.from({ length: workers }, () => ({ label: "", prefix: "", bytes: 0, share: 0, lastQuarter: 0 }));
  let count = 0;
  let totalBytes = 0;
  let doneBytes = 0;
  let started = 0;
  let drawn = 0;
  let lastDraw = -Infinity;
  const eta = () => {
    const done = doneBytes + slots.reduce((n, s) => n + s.bytes * s.share, 0);
    const elapsed = (now() - started) / 1000;
    const percent = totalBytes ? Math.floor((done / totalBytes) * 100) : 100;
    return `${percent}% of ${count} session${count === 1 ? "" : "s"}${done > 0 && elapsed > 1 ? `, about ${duration((elapsed * (totalBytes - done)) / done)} left` : ""}`;
  };
  // Both displays learn the run's size the same way; only how they show it differs.
  const begin = (sessions: number, bytes: number) => {
    count = sessions;
    totalBytes = bytes;
    started = now();
  };
  if (!stream.isTTY) {
    return {
      begin,
      start(worker, label, index, bytes) {
        Object.assign(slots[worker], { label, prefix: `[${index + 1}/${count}]`, bytes, share: 0, lastQuarter: 0 });
        stream.write(`${slots[worker].prefix} worker ${worker + 1} replaying ${label}\n`);
      },
      update(worker, done, total) {
        const slot = slots[worker];
        slot.share = total ? done / total : 1;
        const quarter = Math.floor(slot.share * 4);
        if (quarter === slot.lastQuarter || quarter === 0) return;
        slot.lastQuarter = quarter;
        stream.write(`${slot.prefix} ${slot.label}: ${quarter * 25}% (run: ${eta()})\n`);
      },
      finish(worker, note) {
        const slot = slots[worker];
        doneBytes += slot.bytes;
        Object.assign(slot, { bytes: 0, share: 0 });
        stream.write(`${slot.prefix} ${slot.label}: ${note}\n`);
      },
      end() {},
    };
  }
  const width = 20;
  const clear = () => {
    if (drawn) stream.write(`\x1b[${drawn}A\r\x1b[J`);
    drawn = 0;
  };
  const draw = (force = false) => {
    if (!force && now() - lastDraw < 100) return;
    lastDraw = now();
    clear();
    const lines = slots.map((s, i) => {
      if (!s.label) return `worker ${i + 1}: idle`;
      const filled = Math.round(s.share * width);
      return `worker ${i + 1} ${s.prefix} ${"█".repeat(filled)}${"░".repeat(width - filled)} ${String(Math.floor(s.share * 100)).padStart(3)}% ${s.label}`;
    });
    lines.push(`all: ${eta()}`);
    stream.write(`${lines.map((l) => `${l}\x1b[K`).join("\n")}\n`);
    drawn = lines.length;
  };
  return {
    begin,
    start(worker, label, index, bytes) {
      Object.assign(slots[worker], { label, prefix: `[${index + 1}/${count}]`, bytes, share: 0 });
      draw(true);
    },
    update(worker, done, total) {
      slots[worker].share = total ? done / total : 1;
      draw();
    },
    finish(worker, note) {
      const slot = slots[worker];
      doneBytes += slot.bytes;
      clear();
      stream.write(`${slot.prefix} ${slot.label}: ${note}\x1b[K\n`);
      Object.assign(slot, { label: "", bytes: 0, share: 0 });
      draw(true);
    },
    end() {
      clear();
    },
  };
}
