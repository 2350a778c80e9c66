'use strict';

// The layering of lib/ as rules (docs/architecture.md, "The layers, as rules"): `npm run lint:deps` fails with the import
// that breaks one. Paths are relative to where depcruise runs (the package, or a fixture tree shaped like it). Tests and
// the bench are outside the rules: only lib/ is cruised.

// The floors of lib/, lowest first: a module imports its own floor and the floors below it, never one above.
const floors = [
    {
        name: 'leaves',
        path: '^lib/[^/]+\\.ts$',
        // The top-level files that sit higher up are named on their floors below.
        pathNot: '^lib/(config|scope|health|index|testing|testing-types|logging|listen|webhook-receiver|cli)\\.ts$',
        comment: 'the top-level leaves (fields, errors, records, the descriptor type namespace.ts, the record context, the outbox model, signing, transitions, ...)'
    },
    {
        name: 'storage',
        path: '^lib/storage/',
        comment: 'the drivers and the engine table: it imports nothing of lib/namespaces/, not even a type (imports run namespaces -> storage)'
    },
    {
        name: 'settings',
        path: '^lib/config\\.ts$',
        comment: 'the settings, decided once over the engine table and handed down to the data set and everything above'
    },
    {
        name: 'data-set',
        path: '^lib/(data-set/|scope\\.ts$)',
        comment: 'a data set\'s runtime and what it carries (clock, journals, fault rules), and the request\'s scope of one'
    },
    {
        name: 'namespaces',
        path: '^lib/namespaces/',
        comment: 'one folder per namespace, its stores per engine included, and the list of them'
    },
    {
        name: 'instances',
        path: '^lib/instances/',
        comment: 'the registry, its routes, the one lookup and the helper that declares a feature\'s scoped routes'
    },
    {
        name: 'features',
        path: '^lib/((faults|journal|events|console|openapi)/|health\\.ts$)',
        comment: 'the services and routes over a data set: faults, journal, events, the console, the documents, health'
    },
    {
        name: 'composition',
        path: '^lib/((index|testing|testing-types|logging|listen|webhook-receiver)\\.ts$|scenarios/|drift/)',
        comment: 'createServer and the test kit, and what they serve beside the API (logging, the webhook listener and receiver, the scenario runner, the drift replay)'
    },
    {
        name: 'cli',
        path: '^lib/cli(\\.ts$|/)',
        comment: 'the command line: it calls lib, and nothing in lib calls it'
    }
];

// A floor's modules, as a `from` or `to` of a rule.
const modulesOf = function (floor) {

    return floor.pathNot ? { path: floor.path, pathNot: floor.pathNot } : { path: floor.path };
};

// One rule per floor but the top: it imports none of the floors above it.
const floorRules = floors.slice(0, -1).map((floor, i) => ({
    name: `${floor.name}-imports-no-floor-above`,
    comment: `The ${floor.name} floor (${floor.comment}) imports none of the floors above it: ${floors.slice(i + 1).map((above) => above.name).join(', ')}.`,
    severity: 'error',
    from: modulesOf(floor),
    to: { path: floors.slice(i + 1).map((above) => above.path) }
}));

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
        ...floorRules,
        {
            name: 'every-folder-on-a-floor',
            comment: 'A folder of lib/ that is on no floor escapes the floor rules: it is placed in .dependency-cruiser.js first.',
            severity: 'error',
            from: { path: '^lib/', pathNot: floors.map((floor) => floor.path) },
            to: { path: '^lib/' }
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
            comment: 'A namespace is one folder: it imports no other namespace (nor the list of them); what they share lies below.',
            severity: 'error',
            from: { path: '^lib/namespaces/([^/]+)/' },
            to: { path: '^lib/namespaces/', pathNot: '^lib/namespaces/$1/' }
        },
        {
            name: 'feature-imports-no-other-feature-internals',
            comment: `Features on one floor (${features}) import another one's index.ts only: its internals are its own.`,
            severity: 'error',
            from: { path: `^lib/${features}/` },
            to: { path: `^lib/${features}/`, pathNot: ['^lib/$1/', `^lib/${features}/index\\.ts$`] }
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
