/**
 * The module graph's rules, checked by `npm run lint`. Type-only imports count: a cycle through
 * them is still a cycle a reader must untangle, and it turns into a runtime one the day a value
 * crosses it.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Every module can be imported first: no import cycle, runtime or type-only.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'migrations-are-frozen',
      severity: 'error',
      comment:
        'A migration means today what it meant when it shipped: it imports nothing but Kysely and its sibling migrations.',
      from: { path: '^packages/server/src/store/migrations/' },
      to: { pathNot: ['^packages/server/src/store/migrations/', '^node_modules/kysely/'] },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing fails at run time.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['/dist/', '/node_modules/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};
