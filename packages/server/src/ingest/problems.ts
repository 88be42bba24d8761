/**
 * The problems an import found. Keeps the earliest lines' problems up to a bound (a file that is
 * bad throughout must not fill memory with messages) and counts the rest.
 */
import { OperatorError } from '../domain/errors.js';

export interface Problem {
  readonly line: number;
  readonly message: string;
}

/** Problems shown to the operator; the rest are counted. */
export const SHOWN_PROBLEMS = 50;

export class ProblemList {
  private kept: Problem[] = [];
  private total = 0;

  add(line: number, message: string): void {
    this.total += 1;
    this.kept.push({ line, message });
    if (this.kept.length > SHOWN_PROBLEMS * 4) this.trim();
  }

  get count(): number {
    return this.total;
  }

  /** The earliest problems by line, at most SHOWN_PROBLEMS. */
  first(): Problem[] {
    this.trim();
    return this.kept;
  }

  private trim(): void {
    this.kept.sort((a, b) => a.line - b.line);
    this.kept = this.kept.slice(0, SHOWN_PROBLEMS);
  }
}

/** The import was refused; nothing was written. The message lists the problems by line. */
export class ImportRejectedError extends OperatorError {
  constructor(
    readonly file: string,
    readonly problems: readonly Problem[],
    readonly total: number,
  ) {
    const lines = problems.map((p) => `  line ${p.line}: ${p.message}`);
    if (total > problems.length) lines.push(`  … and ${total - problems.length} more`);
    super(
      `import refused, nothing was written: ${total} problem${total === 1 ? '' : 's'} in ${file}\n${lines.join('\n')}`,
    );
  }
}
