/** Why a delivery was rejected: `step` names the verification step that failed. */

export type WebhookVerificationStep =
  /** The body was not given as raw bytes (a string or Buffer), e.g. a JSON parser ran first. */
  | 'raw_body_required'
  /** One of the five delivery headers is absent or empty; `header` names it. */
  | 'missing_header'
  /** The timestamp is not decimal Unix epoch seconds. */
  | 'timestamp_invalid'
  /** The timestamp is further than the tolerance from the receiver's clock, past or future. */
  | 'timestamp_out_of_tolerance'
  /** The signature header carries no `v1=` signature. */
  | 'signature_version_unsupported'
  /** No `v1=` signature matches the HMAC of the timestamp and the raw body. */
  | 'signature_mismatch'
  /** The signed body is not a JSON object. */
  | 'body_invalid_json'
  /** The Event-Id header differs from the body's `id`. */
  | 'event_id_mismatch'
  /** The Webhook-Version header differs from the body's `api_version`. */
  | 'version_mismatch';

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
  readonly step: WebhookVerificationStep;
  /** For `missing_header`: the header's full name, e.g. `Eds-Signature`. */
  readonly header: string | undefined;

  constructor(step: WebhookVerificationStep, message: string, header?: string) {
    super(message);
    this.step = step;
    this.header = header;
  }

  /**
   * The HTTP status a receiver answers with. The service treats 4xx as terminal (no retry):
   * 401 when the signature is wrong, 400 for any other malformed delivery. A missing raw body
   * is the receiver's own misconfiguration, so 500: the service retries, and once the receiver
   * is fixed the retry succeeds.
   */
  get httpStatus(): 400 | 401 | 500 {
    if (this.step === 'raw_body_required') return 500;
    return this.step === 'signature_mismatch' || this.step === 'signature_version_unsupported' ? 401 : 400;
  }
}
