/**
 * A short-lived signed link to a recording. The contract forbids storing it as an identifier,
 * writing it to client-visible logs, and using it after `expires_at`; this class makes the
 * last two hard to do by accident: the URL is only reachable through a getter that refuses
 * once expired, and printing or serializing the object shows the expiry, never the URL.
 */
import { AudioLinkExpiredError } from './errors.js';
import { inspectCustom } from './inspect.js';
import type { AudioLinkBody } from './types.js';

export class AudioLink {
  readonly #url: string;
  readonly #expiresAt: Date;
  readonly #now: () => number;

  constructor(body: AudioLinkBody, now: () => number = Date.now) {
    const expiresAt = new Date(body.expires_at);
    if (typeof body.audio_url !== 'string' || Number.isNaN(expiresAt.getTime())) {
      throw new TypeError('An audio link needs audio_url and a valid expires_at.');
    }
    this.#url = body.audio_url;
    this.#expiresAt = expiresAt;
    this.#now = now;
  }

  /** When the link stops working. */
  get expiresAt(): Date {
    return new Date(this.#expiresAt.getTime());
  }

  get expired(): boolean {
    return this.#now() >= this.#expiresAt.getTime();
  }

  /** Milliseconds left before expiry (0 once expired). */
  get remainingMs(): number {
    return Math.max(0, this.#expiresAt.getTime() - this.#now());
  }

  /**
   * The signed URL. Throws `AudioLinkExpiredError` at or after `expires_at`. Use it at once
   * (hand it to the player or downloader); do not log or store it.
   */
  get url(): string {
    if (this.expired) throw new AudioLinkExpiredError(this.expiresAt);
    return this.#url;
  }

  toString(): string {
    return `AudioLink(expires_at=${this.#expiresAt.toISOString()}, url=[redacted])`;
  }

  /** Serializing keeps the expiry only, so the link cannot end up in stored JSON or logs. */
  toJSON(): { expires_at: string; audio_url: '[redacted]' } {
    return { expires_at: this.#expiresAt.toISOString(), audio_url: '[redacted]' };
  }

  [inspectCustom](): string {
    return this.toString();
  }
}
