/**
 * An answer assembled from the read model's stored bytes: the body exactly as sent, its strong
 * entity tag, and the patients it discloses (for the audit's record of who saw which patient).
 */
export class StoredAnswer {
  constructor(
    /** UTF-8 JSON, sent as is. */
    readonly body: string,
    /** Quoted strong tag; equal bodies have equal tags, and a changed body a new one. */
    readonly etag: string,
    readonly disclosedPatientIds: readonly string[],
  ) {}
}
