/** A one-line progress bar on stderr, drawn only on a terminal (logs and pipes stay clean). */

export interface Progress {
  update(done: number, total: number): void;
  finish(): void;
}

export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (!stream.isTTY) return { update() {}, finish() {} };
  const started = Date.now();
  let lastDraw = 0;
  let drawn = false;
  return {
    update(done, total) {
      const now = Date.now();
      if (now - lastDraw < 100 && done < total) return;
      lastDraw = now;
      drawn = true;
      const width = 30;
      const ratio = total === 0 ? 1 : Math.min(1, done / total);
      const filled = Math.round(ratio * width);
      const seconds = ((now - started) / 1000).toFixed(0);
      stream.write(
        `\r${label} [${'#'.repeat(filled)}${' '.repeat(width - filled)}] ${(ratio * 100).toFixed(0).padStart(3)}% ` +
          `${done.toLocaleString('en-US')}/${total.toLocaleString('en-US')} ${seconds}s`,
      );
    },
    finish() {
      if (drawn) stream.write('\n');
    },
  };
}
