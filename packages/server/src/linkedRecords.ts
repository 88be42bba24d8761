/**
 * Records kept in the order they were appended, linked through their own `older` and `newer`
 * fields, so that appending and removing allocate nothing. A long-lived Set or Map of records
 * that come and go on every request rebuilds its table every few dozen changes, and under load
 * each rebuilt table outlives the young generation and fills the old space.
 */
export interface LinkedRecord<T> {
  older: T | undefined;
  newer: T | undefined;
}

export class LinkedRecords<T extends LinkedRecord<T>> {
  #oldest: T | undefined;
  #newest: T | undefined;

  get oldest(): T | undefined {
    return this.#oldest;
  }

  /** `record` must not be in a list. */
  append(record: T): void {
    record.older = this.#newest;
    record.newer = undefined;
    if (this.#newest === undefined) this.#oldest = record;
    else this.#newest.newer = record;
    this.#newest = record;
  }

  /**
   * `record` must be in this list. Its links are cleared too: a removed record promoted to the old
   * space would otherwise hold its neighbours through young-generation collections, which treat
   * old objects' pointers as roots.
   */
  remove(record: T): void {
    if (record.older === undefined) this.#oldest = record.newer;
    else record.older.newer = record.newer;
    if (record.newer === undefined) this.#newest = record.older;
    else record.newer.older = record.older;
    record.older = undefined;
    record.newer = undefined;
  }
}
