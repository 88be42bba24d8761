/**
 * One PostgreSQL statement for every call of a read made in the same event-loop turn.
 *
 * Under load the API answers many requests per turn (every socket that became readable), and on
 * PostgreSQL each request's reads were statements of their own: a pool client, the
 * extended-protocol round trip and a backend's bind and execute per read, on the vCPUs the
 * service shares with its backends. The calls waiting at the end of a turn are sent as one
 * statement instead: each argument as an array (text, or bigint for numbers) that
 * `unnest … WITH ORDINALITY` turns back into rows, each row running the read's own SQL through
 * `CROSS JOIN LATERAL`, and every result row tagged with the ordinal of the call it answers. A
 * call alone in its turn runs the read's own statement, so a quiet service sends what it sent
 * before.
 *
 * A call's rows keep the order its own statement gives them because of how PostgreSQL runs the
 * statement, not because SQL promises it: a subquery with ORDER BY, LIMIT or an aggregate that
 * refers to the outer row cannot be flattened into the join, so it runs as a nested loop, once
 * per call in the calls' order, each run emitting its rows in its own order (the page reads'
 * plans: Nested Loop, Function Scan, Limit, Index Scan). The tests read pages together to hold
 * this.
 *
 * A value one call brought that the database refuses (a data exception) fails the statement of
 * its whole turn; the turn's calls are then run one by one, so only that call fails. Any other
 * failure (a lost connection, a timeout, a cancel) fails them all, as it would have failed most
 * of them on their own. The statement's time is its calls' times added, under one
 * `statement_timeout`, so a turn's calls go in statements of at most MAX_CALLS.
 *
 * The calls of one turn are concurrent requests, so answering them from one statement (one
 * snapshot) changes nothing a client can tell, as with SQLite's per-turn read snapshot
 * (readSnapshot.ts).
 */
import type pg from 'pg';
import { arrayRowBuilder } from './arrayRows.js';
import { chunks } from './statementBatches.js';

/**
 * Calls per statement: each brings one array element per argument, never a new parameter. About
 * the connections a load generator or a busy partner keeps open at once; a turn has seldom more.
 */
export const MAX_CALLS = 64;

/** SQLSTATE class 22, data exception: a value the database refused. */
const DATA_EXCEPTION = /^22/;

/** The type of the array an argument's values travel in; undefined for a number not an integer. */
export function arrayTypeOf(arg: string | number): 'text' | 'bigint' | undefined {
  if (typeof arg === 'string') return 'text';
  return Number.isSafeInteger(arg) ? 'bigint' : undefined;
}

/** The column carrying a row's call ordinal; a name no read selects. */
const ORDINAL = 'eds_call_ordinal';

interface Waiting {
  values: unknown[];
  resolve: (rows: unknown[]) => void;
  reject: (error: unknown) => void;
}

export interface TurnBatchStatement {
  /** The read's own statement, for a call alone in its turn. */
  name: string;
  sql: string;
  /** Which parameter is which call argument (`arg`), or a constant of the read's SQL. */
  slots: ({ arg: number } | { value: unknown })[];
  /** Each argument's PostgreSQL type, that of its array's elements. */
  argTypes: readonly string[];
}

export class PgTurnBatch {
  readonly #pool: pg.Pool;
  readonly #single: TurnBatchStatement;
  readonly #batchName: string;
  readonly #batchSql: string;
  /** The constant parameters, after the argument arrays. */
  readonly #constants: unknown[];
  #waiting: Waiting[] = [];
  #toRow: { key: string; build: (values: unknown[]) => unknown } | undefined;

  /** The turn batch of a read, typed by its first call's arguments; undefined if they cannot be. */
  static forCall(
    pool: pg.Pool,
    read: Omit<TurnBatchStatement, 'argTypes'>,
    args: readonly (string | number)[],
  ): PgTurnBatch | undefined {
    const argTypes = args.map(arrayTypeOf);
    if (argTypes.some((type) => type === undefined)) return undefined;
    return new PgTurnBatch(pool, { ...read, argTypes: argTypes as string[] });
  }

  constructor(pool: pg.Pool, statement: TurnBatchStatement) {
    this.#pool = pool;
    this.#single = statement;
    this.#batchName = `${statement.name}_turn`;
    const { sql, constants } = batchedSql(statement);
    this.#batchSql = sql;
    this.#constants = constants;
  }

  /** Whether a call with these arguments can join the turn's statement (its arrays' types). */
  takes(args: readonly (string | number)[]): boolean {
    const { argTypes } = this.#single;
    for (let i = 0; i < argTypes.length; i++) if (arrayTypeOf(args[i]!) !== argTypes[i]) return false;
    return true;
  }

  /** The rows of one call, answered once its turn's statement has run. */
  read(values: unknown[]): Promise<unknown[]> {
    return new Promise((resolve, reject) => {
      if (this.#waiting.length === 0) setImmediate(() => this.#flush());
      this.#waiting.push({ values, resolve, reject });
    });
  }

  #flush(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const calls of chunks(waiting, MAX_CALLS)) {
      if (calls.length === 1) this.#runAlone(calls[0]!);
      else
        this.#runMany(calls).catch((error: unknown) => {
          if (DATA_EXCEPTION.test(String((error as { code?: unknown }).code))) {
            for (const call of calls) this.#runAlone(call);
          } else for (const call of calls) call.reject(error);
        });
    }
  }

  #runAlone(call: Waiting): void {
    const { name, sql } = this.#single;
    this.#pool.query({ name, text: sql, values: call.values }).then(
      (result) => call.resolve(result.rows),
      (error: unknown) => call.reject(error),
    );
  }

  async #runMany(calls: Waiting[]): Promise<void> {
    const { slots, argTypes } = this.#single;
    const arrays: unknown[][] = argTypes.map(() => new Array<unknown>(calls.length));
    for (let c = 0; c < calls.length; c++) {
      const values = calls[c]!.values;
      for (let s = 0; s < slots.length; s++) {
        const slot = slots[s]!;
        if ('arg' in slot) arrays[slot.arg]![c] = values[s];
      }
    }
    const result = await this.#pool.query({
      name: this.#batchName,
      text: this.#batchSql,
      values: [...arrays, ...this.#constants],
      rowMode: 'array',
    });
    const toRow = this.#rowBuilder(result.fields.map((field) => field.name));
    const answers: unknown[][] = calls.map(() => []);
    for (const values of result.rows as unknown as unknown[][]) {
      // The ordinal is 1-based and comes back as a number (int8 is parsed as one, connection.ts).
      answers[(values[0] as number) - 1]!.push(toRow(values));
    }
    for (let c = 0; c < calls.length; c++) calls[c]!.resolve(answers[c]!);
  }

  /** Objects keyed as the read's own statement keys them, built from the batch's array rows. */
  #rowBuilder(names: string[]): (values: unknown[]) => unknown {
    const key = names.join('\u0000');
    if (this.#toRow?.key !== key) {
      if (names[0] !== ORDINAL) throw new Error('pgTurnBatch: the batch lost its ordinal column');
      this.#toRow = { key, build: arrayRowBuilder(names.slice(1), 1) };
    }
    return this.#toRow.build;
  }
}

/**
 * The read's SQL run once per call: `$n` of an argument becomes that call's array element, a
 * constant keeps a parameter of its own after the arrays.
 */
function batchedSql(statement: TurnBatchStatement): { sql: string; constants: unknown[] } {
  const { sql, slots, argTypes } = statement;
  const arity = argTypes.length;
  const constants: unknown[] = [];
  const placeholder = slots.map((slot) => {
    if ('arg' in slot) return `eds_q.eds_a${slot.arg}`;
    constants.push(slot.value);
    return `$${arity + constants.length}`;
  });
  let seen = 0;
  // Parameters are the only `$n` in compiled SQL: values never reach the text.
  const inner = sql.replace(/\$(\d+)\b/g, (_, n: string) => {
    seen++;
    const replacement = placeholder[Number(n) - 1];
    if (replacement === undefined) throw new Error(`pgTurnBatch: no slot for $${n}`);
    return replacement;
  });
  if (seen < slots.length) throw new Error('pgTurnBatch: a parameter was not found in the SQL');
  const arrays = argTypes.map((type, i) => `$${i + 1}::${type}[]`).join(', ');
  const columns = Array.from({ length: arity }, (_, i) => `eds_a${i}`).join(', ');
  // Names of the service's own (eds_…), so the read's SQL can neither shadow nor capture them.
  return {
    // `eds_r.*` only repeats the read's own named columns (preparedQuery refuses `*` in a read).
    sql: `SELECT eds_q.eds_n AS ${ORDINAL}, eds_r.* FROM unnest(${arrays}) WITH ORDINALITY AS eds_q(${columns}, eds_n) CROSS JOIN LATERAL (${inner}) AS eds_r`,
    constants,
  };
}
