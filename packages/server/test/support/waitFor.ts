/**
 * Polls a condition until it holds: tests wait for states, not for amounts of time. The deadline
 * is only there to turn a state that never comes into a failure instead of a hang.
 */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  what = 'the condition',
  deadlineMs = 30_000,
): Promise<void> {
  const giveUpAt = Date.now() + deadlineMs;
  while (!(await condition())) {
    if (Date.now() > giveUpAt) throw new Error(`${what} did not come about within ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
