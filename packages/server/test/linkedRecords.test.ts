import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type LinkedRecord, LinkedRecords } from '../src/linkedRecords.js';

interface Item extends LinkedRecord<Item> {
  name: string;
}

const item = (name: string): Item => ({ name, older: undefined, newer: undefined });

function names(list: LinkedRecords<Item>): string[] {
  const out: string[] = [];
  for (let at = list.oldest; at !== undefined; at = at.newer) out.push(at.name);
  return out;
}

test('happy: records keep the order they were appended in, and any one can be taken out', () => {
  const list = new LinkedRecords<Item>();
  const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(item) as [Item, Item, Item, Item];
  for (const record of [a, b, c, d]) list.append(record);
  assert.deepEqual(names(list), ['a', 'b', 'c', 'd']);
  list.remove(b);
  assert.deepEqual(names(list), ['a', 'c', 'd']);
  list.remove(a);
  list.remove(d);
  assert.deepEqual(names(list), ['c']);
  list.append(a);
  assert.deepEqual(names(list), ['c', 'a']);
  list.remove(c);
  list.remove(a);
  assert.equal(list.oldest, undefined);
  list.append(b);
  assert.deepEqual(names(list), ['b']);
});

test('happy: a record taken out holds no link to the records that were beside it', () => {
  const list = new LinkedRecords<Item>();
  const [a, b, c] = ['a', 'b', 'c'].map(item) as [Item, Item, Item];
  for (const record of [a, b, c]) list.append(record);
  list.remove(b);
  assert.equal(b.older, undefined);
  assert.equal(b.newer, undefined);
});
