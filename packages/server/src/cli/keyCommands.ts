/** `eds key create|revoke|disable|enable|list`: API keys. The token is printed once, at creation. */
import { type Command, InvalidArgumentError } from 'commander';
import { SCOPES } from '../contract/routes.js';
import { changeApiKeyState, describeApiKey, mintApiKey, parseScopes } from '../domain/apiKeys.js';
import { OperatorError } from '../domain/errors.js';
import { listApiKeys } from '../store/apiKeys.js';
import { getOrganization } from '../store/organizations.js';
import type { ApiKeyKind, ApiKeyState } from '../store/schema.js';
import { toIso } from '../time.js';
import { parseInstant, parseList } from './optionParsers.js';
import { note } from './output.js';
import type { runCommand } from './runCommand.js';

interface CreateOptions {
  org: string;
  scopes: string[];
  kind: ApiKeyKind;
  expiresAt?: number;
  test: boolean;
}

function parseKind(text: string): ApiKeyKind {
  if (text === 'organization' || text === 'user') return text;
  throw new InvalidArgumentError('expected organization or user.');
}

export function registerKeyCommands(program: Command, run: typeof runCommand): void {
  const key = program.command('key').description('create, list and change API keys');

  key
    .command('create')
    .description('a new API key; its token is printed this once and never stored')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--scopes <scopes>', `comma-separated: ${SCOPES.join(',')}`, parseList)
    .option(
      '--kind <kind>',
      'organization or user (only organization keys work on the API)',
      parseKind,
      'organization',
    )
    .option('--expires-at <iso>', 'RFC 3339 date-time after which the key is refused', parseInstant)
    .option('--test', 'an eds_test_ key (accepted only by sandbox deployments)', false)
    .action((opts: CreateOptions) =>
      run(async ({ services, config }) => {
        if (opts.scopes.length === 0) throw new OperatorError('--scopes needs at least one scope');
        const scopes = parseScopes(opts.scopes);
        const now = services.clock();
        if (opts.expiresAt !== undefined && opts.expiresAt <= now) {
          throw new OperatorError('--expires-at is in the past; the key would never work');
        }
        const { key: created, token } = await mintApiKey(
          services.store.db,
          services.digestKey,
          {
            organizationId: opts.org,
            scopes,
            kind: opts.kind,
            environment: opts.test ? 'test' : 'live',
            expiresAt: opts.expiresAt ?? null,
            createdBy: 'cli',
          },
          now,
        );
        if (opts.test && config.deploymentMode === 'live') {
          note(
            'eds: note: this deployment is live and refuses eds_test_ keys (EDS_DEPLOYMENT_MODE=sandbox accepts them)',
          );
        }
        return {
          key_id: created.id,
          token,
          organization_id: created.organizationId,
          scopes: created.scopes,
          kind: created.kind,
          expires_at: created.expiresAt === null ? null : toIso(created.expiresAt),
          environment: created.environment,
        };
      }),
    );

  const stateCommand = (name: string, to: ApiKeyState, description: string) =>
    key
      .command(name)
      .description(description)
      .argument('<id>', 'key id')
      .action((id: string) =>
        run(async ({ services }) =>
          describeApiKey(await changeApiKeyState(services.store.db, id, to, services.clock())),
        ),
      );
  stateCommand('revoke', 'revoked', 'revoke a key for good');
  stateCommand('disable', 'disabled', 'turn a key off until it is enabled again');
  stateCommand('enable', 'active', 'turn a disabled key back on (a revoked key stays revoked)');

  key
    .command('list')
    .description('the organization’s keys, without tokens')
    .requiredOption('--org <id>', 'organization id')
    .action((opts: { org: string }) =>
      run(async ({ services }) => {
        const db = services.store.db;
        if (!(await getOrganization(db, opts.org))) {
          throw new OperatorError(`organization ${opts.org} does not exist`);
        }
        return { keys: (await listApiKeys(db, opts.org)).map(describeApiKey) };
      }),
    );
}
