/**
 * The IETF rate-limit fields (draft-ietf-httpapi-ratelimit-headers-10/11, structured-field
 * form): `RateLimit-Policy: "key";q=<quota>;w=<window s>` and
 * `RateLimit: "key";r=<remaining>;t=<s until the quota is back>`.
 *
 * The draft speaks of a quota per window; a token bucket is stated as its burst (q) and the
 * time the rate takes to refill it (w = burst / rate), so r never exceeds q and t never
 * exceeds w. t is the time until the bucket is full again (ceil, seconds).
 */
import type { KeyLimit } from './requestLimits.js';
import type { BucketPolicy } from './tokenBucket.js';

export const POLICY_NAME = 'key';

/** A policy's field and window, built once per policy object (RequestLimits keeps one per rate). */
const policyFields = new WeakMap<BucketPolicy, { field: string; window: number }>();

function policyFieldOf(policy: BucketPolicy): { field: string; window: number } {
  let built = policyFields.get(policy);
  if (built === undefined) {
    const window = Math.max(1, Math.ceil(policy.burst / policy.rate));
    built = { field: `"${POLICY_NAME}";q=${policy.burst};w=${window}`, window };
    policyFields.set(policy, built);
  }
  return built;
}

export function rateLimitFields({ policy, decision }: KeyLimit): {
  'RateLimit-Policy': string;
  RateLimit: string;
} {
  const { field, window } = policyFieldOf(policy);
  const resetSeconds = Math.min(window, Math.ceil(decision.fullInMs / 1000 - 1e-9));
  return {
    'RateLimit-Policy': field,
    RateLimit: `"${POLICY_NAME}";r=${decision.remaining};t=${Math.max(0, resetSeconds)}`,
  };
}
