/** When demo visits happen: weekdays, clinic hours, spread evenly over the demo window. */
import { DAY_MS } from '../time.js';
import { WINDOW_END, WINDOW_START } from './demoPlan.js';
import type { Random } from './random.js';

const DAYS = Math.floor((WINDOW_END - WINDOW_START) / DAY_MS);

export function pickVisitTime(random: Random): number {
  let day = random.int(0, DAYS - 1);
  const weekday = new Date(WINDOW_START + day * DAY_MS).getUTCDay();
  // Weekend visits move to the Friday before.
  if (weekday === 6) day -= 1;
  if (weekday === 0) day -= 2;
  const minuteOfDay = random.int(8 * 60, 17 * 60 + 30);
  return WINDOW_START + Math.max(0, day) * DAY_MS + minuteOfDay * 60_000 + random.int(0, 59) * 1000;
}
