/**
 * An answer assembled from the read model's stored bytes: the body exactly as sent, its strong
 * entity tag, and the patients it discloses (for the audit's record of who saw which patient).
 */
import type { Buffer } from 'node:buffer';

export class StoredAnswer {
  constructor(
    /** UTF-8 JSON, sent as is: a string, or its bytes where they were assembled as bytes. */
    readonly body: string | Buffer,
    /** Quoted strong tag; equal bodies have equal tags, and a changed body a new one. */
    readonly etag: string,
    readonly disclosedPatientIds: readonly string[],
  ) {}
}
