/**
 * `eds webhook …`: subscriptions, activation, receiver correlation, readiness revocation, and the
 * delivery tools (list, redeliver, recover). Signing secrets and key tokens are printed once, by
 * the command that makes them; nothing else ever prints them.
 */
import { userInfo } from 'node:os';
import { type Command, InvalidArgumentError } from 'commander';
import { FOLLOW_UP_ROUTES } from '../contract/routes.js';
import type { CorrelationStatus, DeliveryStatus } from '../database/schema.js';
import { OperatorError } from '../domain/errors.js';
import {
  DELIVERY_REPORT_COLUMNS,
  deliveryReportRows,
  listDeliveryViews,
  recoverDeliveries,
  redeliverEvent,
} from '../webhooks/deliveryOps.js';
import { listFailures, resumeSubscription } from '../webhooks/endpointTrouble.js';
import {
  activateSubscription,
  CORRELATION_STATUSES,
  changeEndpoint,
  checkSubscription,
  createSubscription,
  DEFAULT_SECRET_GRACE_SECONDS,
  describeSubscription,
  listSubscriptionViews,
  revokeReadiness,
  rotateSigningSecret,
  setCorrelationStatus,
} from '../webhooks/subscriptions.js';
import { parseGraceSeconds, parseInstant, parseList, parseWholeNumber } from './optionParsers.js';
import { note, writeLine } from './output.js';
import type { runCommand } from './runCommand.js';

const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'pending',
  'sending',
  'succeeded',
  'failed',
  'cancelled',
];

function parseCorrelation(text: string): CorrelationStatus {
  if ((CORRELATION_STATUSES as readonly string[]).includes(text)) return text as CorrelationStatus;
  throw new InvalidArgumentError(`expected ${CORRELATION_STATUSES.join(' or ')}.`);
}

function parseDeliveryStatus(text: string): DeliveryStatus {
  if ((DELIVERY_STATUSES as readonly string[]).includes(text)) return text as DeliveryStatus;
  throw new InvalidArgumentError(`expected one of ${DELIVERY_STATUSES.join(', ')}.`);
}

type ReportFormat = 'json' | 'ndjson' | 'csv';

function parseReportFormat(text: string): ReportFormat {
  if (text === 'json' || text === 'ndjson' || text === 'csv') return text;
  throw new InvalidArgumentError('expected json, ndjson or csv.');
}

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
function csvField(value: string | number | null): string {
  const text = value === null ? '' : String(value);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Who ran the command, when `--by` does not say: the operating-system account. */
function operatorName(): string {
  try {
    return `os-user:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

export function registerWebhookCommands(program: Command, run: typeof runCommand): void {
  const webhook = program
    .command('webhook')
    .description('webhook subscriptions, activation and deliveries (recording.transcript_ready)');

  webhook
    .command('create')
    .description('a disabled subscription at revision 1; its signing secret is printed this once')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--url <url>', 'the receiver endpoint (https)')
    .action((opts: { org: string; url: string }) =>
      run(async ({ services }) => createSubscription(services, { organizationId: opts.org, url: opts.url })),
    );

  webhook
    .command('list')
    .description('subscriptions, without secrets')
    .option('--org <id>', 'only this organization')
    .action((opts: { org?: string }) =>
      run(async ({ services }) => listSubscriptionViews(services, opts.org)),
    );

  webhook
    .command('show')
    .description('one subscription with its activation, without secrets')
    .argument('<id>', 'subscription id')
    .action((id: string) => run(async ({ services }) => describeSubscription(services, id)));

  webhook
    .command('update')
    .description('change the endpoint URL (a new revision: delivery stops until it is activated)')
    .argument('<id>', 'subscription id')
    .requiredOption('--url <url>', 'the new receiver endpoint (https)')
    .action((id: string, opts: { url: string }) =>
      run(async ({ services }) => changeEndpoint(services, id, opts.url)),
    );

  webhook
    .command('rotate-secret')
    .description(
      'a new signing secret, printed this once; the current one keeps signing until the grace ends (delivery never stops)',
    )
    .argument('<id>', 'subscription id')
    .option(
      '--grace <seconds>',
      'how long the current secret keeps signing (0: the new one signs at once)',
      parseGraceSeconds,
      DEFAULT_SECRET_GRACE_SECONDS,
    )
    .option('--by <name>', 'who rotated it (recorded); default: the operating-system user')
    .action((id: string, opts: { grace: number; by?: string }) =>
      run(async ({ services }) =>
        rotateSigningSecret(services, id, { graceSeconds: opts.grace, by: opts.by ?? operatorName() }),
      ),
    );

  webhook
    .command('activate')
    .description(
      'record readiness and provenance for the current revision, enable the subscription, and mint the receiver’s API key with exactly the approved routes’ scopes',
    )
    .argument('<id>', 'subscription id')
    .requiredOption(
      '--routes <routes>',
      `approved follow-up routes: ${Object.keys(FOLLOW_UP_ROUTES).join(',')}`,
      parseList,
    )
    .requiredOption('--by <name>', 'who approved the activation')
    .requiredOption('--reference <text>', 'the approval record (ticket, change request)')
    .option('--force', 'activate although a confirmation failed (needs --reason)')
    .option('--reason <text>', 'with --force: why, recorded with the activation')
    .action(
      (
        id: string,
        opts: { routes: string[]; by: string; reference: string; force?: boolean; reason?: string },
      ) =>
        run(async ({ services, config }) => {
          if (opts.force === true && opts.reason === undefined) {
            throw new OperatorError('--force needs --reason TEXT (recorded with the activation)');
          }
          if (opts.force !== true && opts.reason !== undefined)
            throw new OperatorError('--reason goes with --force');
          const result = await activateSubscription(services, id, {
            routes: opts.routes,
            by: opts.by,
            reference: opts.reference,
            forceReason: opts.force === true ? opts.reason : undefined,
          });
          if (!config.webhooks.enabled) {
            note(
              'eds: note: webhook delivery is off in this deployment (EDS_WEBHOOKS_ENABLED=true turns it on)',
            );
          } else if (result.correlation_status !== 'confirmed') {
            note('eds: note: delivery waits until `eds webhook correlation ID confirmed`');
          }
          return result;
        }),
    );

  webhook
    .command('check')
    .description(
      'the activation confirmations for the current revision, each passed or failed with the reason (DNS under the egress policy, proxy, TLS); sends no event; exits 1 when one failed',
    )
    .argument('<id>', 'subscription id')
    .action((id: string) =>
      run(async ({ services }) => {
        const result = await checkSubscription(services, id);
        if (!result.passed) process.exitCode = 1;
        return result;
      }),
    );

  webhook
    .command('correlation')
    .description('set the receiver correlation status (delivery needs confirmed)')
    .argument('<id>', 'subscription id')
    .argument('<status>', CORRELATION_STATUSES.join('|'), parseCorrelation)
    .action((id: string, status: CorrelationStatus) =>
      run(async ({ services }) => setCorrelationStatus(services, id, status)),
    );

  webhook
    .command('revoke-readiness')
    .description('disable the subscription and cancel its pending, leased and stale deliveries')
    .argument('<id>', 'subscription id')
    .action((id: string) => run(async ({ services }) => revokeReadiness(services, id)));

  webhook
    .command('deliveries')
    .description(
      'deliveries, newest first, with their attempts (codes, timings, errors; never bodies, URLs or secrets); ndjson or csv for a report to hand to a partner',
    )
    .option('--org <id>', 'only this organization')
    .option('--subscription <id>', 'only this subscription')
    .option('--event <id>', 'only this event')
    .option('--since <iso>', 'only deliveries created at or after this RFC 3339 time', parseInstant)
    .option('--status <status>', DELIVERY_STATUSES.join('|'), parseDeliveryStatus)
    .option(
      '--limit <n>',
      'at most this many (default 100; 100000 for ndjson and csv)',
      parseWholeNumber(1, 1_000_000),
    )
    .option(
      '--format <format>',
      'json (one object), ndjson (a delivery a line) or csv (an attempt a row)',
      parseReportFormat,
      'json',
    )
    .action(
      (opts: {
        org?: string;
        subscription?: string;
        event?: string;
        since?: number;
        status?: DeliveryStatus;
        limit?: number;
        format: ReportFormat;
      }) =>
        run(async ({ services }) => {
          const views = await listDeliveryViews(services, {
            organizationId: opts.org,
            subscriptionId: opts.subscription,
            eventId: opts.event,
            sinceMs: opts.since,
            status: opts.status,
            limit: opts.limit ?? (opts.format === 'json' ? 100 : 100_000),
          });
          if (opts.format === 'json') return views;
          if (opts.format === 'ndjson') {
            for (const view of views.deliveries) await writeLine(JSON.stringify(view));
            return undefined;
          }
          await writeLine(DELIVERY_REPORT_COLUMNS.join(','));
          for (const view of views.deliveries) {
            for (const row of deliveryReportRows(view)) await writeLine(row.map(csvField).join(','));
          }
          return undefined;
        }),
    );

  webhook
    .command('redeliver')
    .description(
      'send an event again to the eligible subscriptions (same Delivery-Id where one exists), or with --endpoint and --since every failed delivery of one endpoint',
    )
    .argument('[event_id]', 'event id')
    .option('--subscription <id>', 'with an event: only this subscription')
    .option('--endpoint <id>', 'without an event: this subscription’s failed deliveries')
    .option(
      '--since <iso>',
      'with --endpoint: of events created at or after this RFC 3339 time',
      parseInstant,
    )
    .action(
      (eventId: string | undefined, opts: { subscription?: string; endpoint?: string; since?: number }) =>
        run(async ({ services }) => {
          if (eventId !== undefined) {
            if (opts.endpoint !== undefined || opts.since !== undefined) {
              throw new OperatorError('give either an event id, or --endpoint ID --since ISO, not both');
            }
            return redeliverEvent(services, eventId, opts.subscription);
          }
          if (opts.endpoint === undefined || opts.since === undefined) {
            throw new OperatorError('give an event id, or --endpoint ID --since ISO');
          }
          return recoverDeliveries(services, { subscriptionId: opts.endpoint, sinceMs: opts.since });
        }),
    );

  webhook
    .command('failures')
    .description('deliveries that failed (attempts exhausted, or a terminal answer), most recent first')
    .option('--org <id>', 'only this organization')
    .option('--since <iso>', 'only those that failed at or after this RFC 3339 time', parseInstant)
    .option('--limit <n>', 'at most this many (default 1000)', parseWholeNumber(1, 100_000))
    .action((opts: { org?: string; since?: number; limit?: number }) =>
      run(async ({ services }) =>
        listFailures(services, { organizationId: opts.org, sinceMs: opts.since, limit: opts.limit }),
      ),
    );

  webhook
    .command('resume')
    .description('resume a paused endpoint: what waited is sent, oldest first')
    .argument('<id>', 'subscription id')
    .action((id: string) => run(async ({ services }) => resumeSubscription(services, id)));

  webhook
    .command('recover')
    .description('re-queue a subscription’s failed deliveries of events created in [--since, --until)')
    .requiredOption('--subscription <id>', 'subscription id')
    .requiredOption('--since <iso>', 'RFC 3339 date-time, inclusive', parseInstant)
    .option('--until <iso>', 'RFC 3339 date-time, exclusive', parseInstant)
    .action((opts: { subscription: string; since: number; until?: number }) =>
      run(async ({ services }) =>
        recoverDeliveries(services, {
          subscriptionId: opts.subscription,
          sinceMs: opts.since,
          untilMs: opts.until,
        }),
      ),
    );
}
