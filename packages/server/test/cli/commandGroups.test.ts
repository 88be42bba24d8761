import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Command } from 'commander';
import { COMMAND_GROUPS, groupsFor } from '../../src/cli/commandGroups.js';
import { runCommand } from '../../src/cli/runCommand.js';

test('each command group registers exactly the top-level commands the table routes to it', async () => {
  for (const group of COMMAND_GROUPS) {
    const program = new Command('eds');
    (await group.load())(program, runCommand);
    assert.deepEqual(
      program.commands.map((command) => command.name()),
      group.commands,
    );
  }
});

test('no top-level command belongs to two groups', () => {
  const names = COMMAND_GROUPS.flatMap((group) => group.commands);
  assert.equal(new Set(names).size, names.length);
});

test('a run that names a command loads only the group that owns it', () => {
  for (const group of COMMAND_GROUPS) {
    for (const command of group.commands) {
      assert.deepEqual(groupsFor([command, '--help']), [group]);
    }
  }
});

test('help, a mistyped command and no command at all load every group, so help lists them all', () => {
  for (const args of [[], ['--help'], ['help', 'serve'], ['serv']]) {
    assert.deepEqual(groupsFor(args), COMMAND_GROUPS);
  }
});
