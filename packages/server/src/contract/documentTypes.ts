/** Document schema types the public API shows; others are internal (decisions.md). */
export const PUBLIC_SCHEMA_TYPES = ['document', 'ambient_transcript'] as const;
