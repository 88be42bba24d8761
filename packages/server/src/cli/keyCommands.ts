/** `eds key create|roll|revoke|disable|enable|list`: API keys. A token is printed once, when minted. */
import { type Command, InvalidArgumentError } from 'commander';
import { digestSecretId } from '../auth/digest.js';
import { SCOPES } from '../contract/routes.js';
import type { ApiKeyKind, ApiKeyState } from '../database/schema.js';
import {
  changeApiKeyState,
  DEFAULT_ROLL_GRACE_SECONDS,
  describeApiKey,
  mintApiKey,
  parseScopes,
  rollApiKey,
} from '../domain/apiKeys.js';
import { OperatorError } from '../domain/errors.js';
import { countKeysOffCurrentSecret, listApiKeys } from '../store/apiKeys.js';
import { getOrganization } from '../store/organizations.js';
import { toIso } from '../time.js';
import { parseGraceSeconds, parseInstant, parseList } from './optionParsers.js';
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

  key
    .command('roll')
    .description(
      'a successor key (same organization, kind, scopes and expiry), its token printed this once; the old key works until the grace ends',
    )
    .argument('<id>', 'key id')
    .option(
      '--grace <seconds>',
      'how long the old key keeps working (0: stops at once)',
      parseGraceSeconds,
      DEFAULT_ROLL_GRACE_SECONDS,
    )
    .action((id: string, opts: { grace: number }) =>
      run(async ({ services }) => {
        const { old, successor, token } = await rollApiKey(
          services.store.db,
          services.digestKey,
          { id, graceSeconds: opts.grace, createdBy: 'cli' },
          services.clock(),
        );
        return {
          key_id: successor.id,
          token,
          organization_id: successor.organizationId,
          scopes: successor.scopes,
          kind: successor.kind,
          expires_at: successor.expiresAt === null ? null : toIso(successor.expiresAt),
          environment: successor.environment,
          rolled_from: old.id,
          old_key_expires_at: toIso(old.expiresAt as number),
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
        const secretId = digestSecretId(services.digestKey.current());
        const keys = (await listApiKeys(db, opts.org)).map((k) => describeApiKey(k, secretId));
        return {
          keys,
          digest_secret: {
            previous_configured: services.digestKey.previous?.() !== undefined,
            // Usable keys of this organization not yet seen on the current secret; at 0
            // (deployment-wide: the metric) the previous secret can be dropped.
            keys_off_current: await countKeysOffCurrentSecret(db, secretId, services.clock(), opts.org),
          },
        };
      }),
    );
}
