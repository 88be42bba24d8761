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
      from: { path: '^packages/server/src/database/migrations/' },
      to: { pathNot: ['^packages/server/src/database/migrations/', '^node_modules/kysely/'] },
    },
    // The server's layers, top to bottom: http → domain → store and readModel (side by side,
    // neither importing the other) → database. A layer imports only the ones below it.
    {
      name: 'domain-below-http',
      severity: 'error',
      comment: 'The rules of the routes know nothing of HTTP: domain/ never imports http/.',
      from: { path: '^packages/server/src/domain/' },
      to: { path: '^packages/server/src/http/' },
    },
    {
      name: 'store-below-domain',
      severity: 'error',
      comment:
        'The aggregates (store/) are read and written by the layers above them and import none of them, nor the read model.',
      from: { path: '^packages/server/src/store/' },
      to: { path: '^packages/server/src/(http|domain|readModel|ingest|demo|cli|webhooks)/' },
    },
    {
      name: 'read-model-below-domain',
      severity: 'error',
      comment:
        'The read model (readModel/) is written by imports and the demo and read by the domain; it imports none of them, nor the aggregates of store/.',
      from: { path: '^packages/server/src/readModel/' },
      to: { path: '^packages/server/src/(http|domain|store|ingest|demo|cli|webhooks)/' },
    },
    {
      name: 'database-at-the-bottom',
      severity: 'error',
      comment:
        'Connections, dialects, prepared statements, the schema and its migrations (database/) know nothing of what is stored: they import no layer above them.',
      from: { path: '^packages/server/src/database/' },
      to: {
        path: '^packages/server/src/(http|domain|store|readModel|ingest|demo|cli|webhooks|audit|auth|media|rateLimit|contract)/',
      },
    },
    {
      name: 'audit-writer-thread-loads-little',
      severity: 'error',
      comment:
        'The SQLite audit writer thread keeps every module it loads in a heap of its own for the life of the process: it loads better-sqlite3 and the audit rows, not the query builder or the connection layer.',
      from: {
        path: '^packages/server/src/(audit/(sqliteWriterThread|writerThreadProtocol)|store/(auditRows|sqliteAuditWriter|patientSets|patientTokens))[.]ts$',
      },
      to: {
        dependencyTypesNot: ['type-only', 'core'],
        pathNot: [
          '^packages/server/src/(audit/writerThreadProtocol|store/(auditRows|sqliteAuditWriter|patientSets|patientTokens))[.]ts$',
          '^node_modules/better-sqlite3/',
        ],
      },
    },
    {
      name: 'node-http-through-require',
      severity: 'error',
      comment:
        "An ES import of node:http evaluates its lazy WebSocket exports and loads Node's bundled undici into every process; src/nodeHttp.ts loads it through require instead.",
      from: { path: '^packages/(server|sdk)/src/', pathNot: '^packages/server/src/nodeHttp[.]ts$' },
      to: { dependencyTypes: ['core'], dependencyTypesNot: ['type-only'], path: '^(node:)?http$' },
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
    exclude: { path: ['^packages/[^/]+/dist/', '^bench/results/', '/node_modules/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json', '.d.ts'],
    },
  },
};
