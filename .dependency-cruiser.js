'use strict';

// The layering of lib/ as rules (docs/architecture.md, "The layers"): `npm run lint:deps` fails with the import that
// breaks one. Paths are relative to where depcruise runs (the package, or a fixture tree shaped like it). Tests and
// the bench are outside the rules: only lib/ is cruised.

// Features on one floor: each may be imported across by its index.ts alone.
const features = '(faults|journal|events|console)';

module.exports = {
    forbidden: [
        {
            name: 'no-circular',
            comment: 'An import circle in lib/: no module of it can be understood, loaded or tested without the others.',
            severity: 'error',
            from: { path: '^lib/' },
            to: { circular: true }
        },
        {
            name: 'storage-imports-no-namespace',
            comment: 'Storage holds drivers only: it imports nothing of lib/namespaces/, not even a type (imports run namespaces -> storage).',
            severity: 'error',
            from: { path: '^lib/storage/' },
            to: { path: '^lib/namespaces/' }
        },
        {
            name: 'sqlite-imports-no-postgres',
            comment: 'Neither engine folder imports the other: what both do alike lives above them, in lib/storage/.',
            severity: 'error',
            from: { path: '^lib/storage/sqlite/' },
            to: { path: '^lib/storage/postgres/' }
        },
        {
            name: 'postgres-imports-no-sqlite',
            comment: 'Neither engine folder imports the other: what both do alike lives above them, in lib/storage/.',
            severity: 'error',
            from: { path: '^lib/storage/postgres/' },
            to: { path: '^lib/storage/sqlite/' }
        },
        {
            name: 'namespace-imports-no-other-namespace',
            comment: 'A namespace is one folder: it imports no other namespace (nor the list of them), only the descriptor type beside them.',
            severity: 'error',
            from: { path: '^lib/namespaces/([^/]+)/' },
            to: { path: '^lib/namespaces/', pathNot: ['^lib/namespaces/$1/', '^lib/namespaces/namespace\\.ts$'] }
        },
        {
            name: 'feature-imports-no-other-feature-internals',
            comment: `Features on one floor (${features}) import another one's index.ts only: its internals are its own.`,
            severity: 'error',
            from: { path: `^lib/${features}/` },
            to: { path: `^lib/${features}/`, pathNot: ['^lib/$1/', `^lib/${features}/index\\.ts$`] }
        },
        {
            name: 'nothing-imports-cli',
            comment: 'The command line is the top: it calls lib, and nothing in lib calls it.',
            severity: 'error',
            from: { path: '^lib/', pathNot: '^lib/cli(\\.ts$|/)' },
            to: { path: '^lib/cli(\\.ts$|/)' }
        }
    ],
    options: {
        doNotFollow: { path: 'node_modules' },
        // `import type` counts: the storage rule says not even a type.
        tsPreCompilationDeps: true,
        // Node's own modules and packages are no part of the layering.
        exclude: { path: 'node_modules' }
    }
};
