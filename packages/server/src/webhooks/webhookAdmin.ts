import type { Services } from '../services.js';

/** What managing subscriptions and checking their readiness needs of the services. */
export type WebhookAdmin = Pick<Services, 'store' | 'config' | 'digestKey' | 'clock'>;
