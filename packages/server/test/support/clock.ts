/** A clock the test moves by hand: nothing that depends on time happens unless the test says so. */
export function testClock(start = Date.parse('2026-06-01T12:00:00Z')) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
