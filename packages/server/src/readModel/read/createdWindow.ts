/** The created_at window a list page or count covers: `startMs` inclusive, `endMs` exclusive. */
export interface CreatedWindow {
  startMs?: number | undefined;
  endMs?: number | undefined;
}

// An absent bound is the widest a time can be, so every page and count has one SQL shape per
// sort order (prepared once) rather than one per combination of bounds.
export const EARLIEST_MS = -8.64e15;
export const AFTER_LATEST_MS = 8.64e15 + 1;
