/**
 * A binary heap: the item that `before` puts first comes out first. For merging many sorted
 * streams (the patient report merges one per patient set), where a linear scan per item would
 * cost the number of streams for every line printed.
 */
export class PriorityQueue<T> {
  private readonly items: T[] = [];

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  push(item: T): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.before(items[i]!, items[parent]!)) break;
      [items[i], items[parent]] = [items[parent]!, items[i]!];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (items.length === 0 || last === undefined) return top;
    items[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let first = i;
      if (left < items.length && this.before(items[left]!, items[first]!)) first = left;
      if (right < items.length && this.before(items[right]!, items[first]!)) first = right;
      if (first === i) return top;
      [items[i], items[first]] = [items[first]!, items[i]!];
      i = first;
    }
  }
}
