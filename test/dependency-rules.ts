import ChildProcess from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';
import Util from 'node:util';

import Code from '@hapi/code';
import Lab from '@hapi/lab';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


const root = Path.join(__dirname, '..');

// A tree shaped like lib/ in which each rule is broken once, beside imports the rules allow.
const fixture = Path.join(__dirname, 'fixtures', 'deps');


interface Cruise {
    summary: {
        violations: { from: string; to: string; rule: { name: string; severity: string } }[];
        totalCruised: number;
        ruleSetUsed: { forbidden: { name: string }[] };
    };
    modules: { source: string; dependencies: { resolved: string }[] }[];
}


// dependency-cruiser is an ES module alone: its command line, as `npm run lint:deps` runs it, answers in JSON.
async function cruise(cwd: string): Promise<Cruise> {

    const bin = Path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
    const args = [bin, 'lib', '--config', Path.join(root, '.dependency-cruiser.js'), '--output-type', 'json'];
    const run = await Util.promisify(ChildProcess.execFile)(process.execPath, args, { cwd, maxBuffer: 64 * 1024 * 1024 }).catch((err: { stdout: string }) => err);
    return JSON.parse(run.stdout) as Cruise;
}


describe('the dependency rules', () => {

    it('are what npm run lint:deps checks lib/ with', () => {

        const scripts = (JSON.parse(Fs.readFileSync(Path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts;
        expect(scripts['lint:deps']).to.equal('depcruise lib --config .dependency-cruiser.js');
    });

    it('each report the import that broke it, type imports included, and allow the imports the layers allow', { timeout: 60_000 }, async () => {

        const result = await cruise(fixture);
        const violations = result.summary.violations.map((violation) => `${violation.rule.severity} ${violation.rule.name}: ${violation.from} -> ${violation.to}`);
        expect(violations.sort()).to.equal([
            'error composition-imports-no-floor-above: lib/index.ts -> lib/cli.ts',
            'error data-set-imports-no-floor-above: lib/data-set/index.ts -> lib/faults/index.ts',
            'error every-folder-on-a-floor: lib/unplaced/module.ts -> lib/namespace.ts',
            'error feature-imports-no-other-feature-internals: lib/events/webhooks.ts -> lib/faults/rules.ts',
            'error features-imports-no-floor-above: lib/journal/index.ts -> lib/cli/start.ts',
            'error instances-imports-no-floor-above: lib/instances/registry.ts -> lib/events/index.ts',
            'error leaves-imports-no-floor-above: lib/namespace.ts -> lib/data-set/clock.ts',
            'error namespace-imports-no-other-namespace: lib/namespaces/other/index.ts -> lib/namespaces/notes/index.ts',
            'error namespaces-imports-no-floor-above: lib/namespaces/notes/routes.ts -> lib/instances/lookup.ts',
            'error no-circular: lib/journal/first.ts -> lib/journal/second.ts',
            'error postgres-imports-no-sqlite: lib/storage/postgres/open.ts -> lib/storage/sqlite/pragmas.ts',
            'error settings-imports-no-floor-above: lib/config.ts -> lib/namespaces/index.ts',
            'error sqlite-imports-no-postgres: lib/storage/sqlite/open.ts -> lib/storage/postgres/pool.ts',
            'error storage-imports-no-floor-above: lib/storage/reads-namespace.ts -> lib/namespaces/notes/index.ts'
        ]);

        // The imports no rule refuses were cruised all the same: down the floors, within one, and across by an index.ts.
        const edges = result.modules.flatMap((module) => module.dependencies.map((dependency) => `${module.source} -> ${dependency.resolved}`));
        expect(edges).to.include([
            'lib/index.ts -> lib/health.ts',
            'lib/health.ts -> lib/scope.ts',
            'lib/scope.ts -> lib/storage/engine.ts',
            'lib/config.ts -> lib/storage/engine.ts',
            'lib/data-set/index.ts -> lib/data-set/clock.ts',
            'lib/events/webhooks.ts -> lib/journal/index.ts',
            'lib/events/webhooks.ts -> lib/events/model.ts',
            'lib/namespaces/index.ts -> lib/namespaces/notes/index.ts',
            'lib/namespaces/other/index.ts -> lib/namespace.ts',
            'lib/namespaces/notes/index.ts -> lib/namespaces/notes/rules.ts',
            'lib/namespaces/notes/index.ts -> lib/storage/engine.ts',
            'lib/cli.ts -> lib/cli/start.ts',
            'lib/cli/start.ts -> lib/events/index.ts'
        ]);
        expect(result.summary.totalCruised).to.equal(31);

        // Each rule of the config is broken in the tree exactly once, so a rule added is a rule proven.
        const broken = result.summary.violations.map((violation) => violation.rule.name);
        expect(broken.sort()).to.equal(result.summary.ruleSetUsed.forbidden.map((rule) => rule.name).sort());
    });
});
