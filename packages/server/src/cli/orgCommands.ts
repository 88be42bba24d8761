/** `eds org create|update|show`: organizations and their access settings. */
import type { Command } from 'commander';
import type { RouteGroup } from '../contract/routes.js';
import { OperatorError } from '../domain/errors.js';
import { newId } from '../ids.js';
import {
  getOrganization,
  type Organization,
  updateOrganizationSettings,
  upsertOrganization,
} from '../store/organizations.js';
import { toIso } from '../time.js';
import { parseOnOff, parseRateLimit, parseRouteGroups, parseTrueFalse } from './optionParsers.js';
import type { runCommand } from './runCommand.js';

export function describeOrganization(org: Organization) {
  return {
    organization_id: org.id,
    name: org.name,
    allowlisted: org.allowlisted,
    routes: org.routes,
    api_keys_enabled: org.apiKeysEnabled,
    /** null: the deployment's EDS_RATE_LIMIT_PER_KEY. */
    rate_limit_per_key: org.rateLimitPerKey,
    created_at: toIso(org.createdAt),
    updated_at: toIso(org.updatedAt),
  };
}

export function registerOrgCommands(program: Command, run: typeof runCommand): void {
  const org = program.command('org').description('create and change organizations');

  org
    .command('create')
    .description('a new organization (not allowlisted, no route groups, API keys on, unless told)')
    .requiredOption('--name <name>', 'display name')
    .option('--allowlisted', 'put it on the external-API allowlist', false)
    .option('--routes <groups>', 'route groups to enable: encounters,documents', parseRouteGroups, [])
    .option('--api-keys <on|off>', 'whether its API keys work', parseOnOff, true)
    .action((opts: { name: string; allowlisted: boolean; routes: RouteGroup[]; apiKeys: boolean }) =>
      run(async ({ services }) => {
        const name = opts.name.trim();
        if (name === '') throw new OperatorError('--name must not be empty');
        const now = services.clock();
        const id = newId('org');
        await upsertOrganization(services.store.db, {
          id,
          name,
          allowlisted: opts.allowlisted,
          routes: opts.routes,
          apiKeysEnabled: opts.apiKeys,
          createdAt: now,
          updatedAt: now,
        });
        return describeOrganization(await mustGet(services.store.db, id));
      }),
    );

  org
    .command('update')
    .description('change an organization’s allowlisting, route groups, API-key switch or rate limit')
    .argument('<id>', 'organization id')
    .option('--allowlisted <true|false>', 'external-API allowlist', parseTrueFalse)
    .option('--routes <groups>', 'route groups (replaces the list; "none" for none)', parseRouteGroups)
    .option('--api-keys <on|off>', 'whether its API keys work', parseOnOff)
    .option(
      '--rate-limit <n|default>',
      'requests a second per key (0: none); "default" follows EDS_RATE_LIMIT_PER_KEY',
      parseRateLimit,
    )
    .action((id: string, opts: UpdateOptions) =>
      run(async ({ services }) => {
        const db = services.store.db;
        if (
          opts.allowlisted === undefined &&
          opts.routes === undefined &&
          opts.apiKeys === undefined &&
          opts.rateLimit === undefined
        ) {
          throw new OperatorError(
            'nothing to change: give --allowlisted, --routes, --api-keys or --rate-limit',
          );
        }
        await mustGet(db, id);
        const changes = {
          allowlisted: opts.allowlisted,
          routes: opts.routes,
          apiKeysEnabled: opts.apiKeys,
          rateLimitPerKey: opts.rateLimit === 'default' ? null : opts.rateLimit,
        };
        const updated = await updateOrganizationSettings(db, id, changes, services.clock());
        return describeOrganization(updated ?? (await mustGet(db, id)));
      }),
    );

  org
    .command('show')
    .description('an organization and its settings')
    .argument('<id>', 'organization id')
    .action((id: string) =>
      run(async ({ services }) => describeOrganization(await mustGet(services.store.db, id))),
    );
}

interface UpdateOptions {
  allowlisted?: boolean;
  routes?: RouteGroup[];
  apiKeys?: boolean;
  rateLimit?: number | 'default';
}

async function mustGet(db: Parameters<typeof getOrganization>[0], id: string): Promise<Organization> {
  const org = await getOrganization(db, id);
  if (!org) throw new OperatorError(`organization ${id} does not exist`);
  return org;
}
