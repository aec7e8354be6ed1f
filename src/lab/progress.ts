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
        stream.write(`\r${prefix} ${"█".repeat(filled)}${"░".repeat(width - filled)} ${String(percent).padStart(3)}% ${label}\x1b[K`);
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
