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
            'error feature-imports-no-other-feature-internals: lib/events/dispatcher.ts -> lib/faults/rules.ts',
            'error namespace-imports-no-other-namespace: lib/namespaces/other/index.ts -> lib/namespaces/notes/index.ts',
            'error no-circular: lib/cycle/first.ts -> lib/cycle/second.ts',
            'error nothing-imports-cli: lib/health.ts -> lib/cli.ts',
            'error nothing-imports-cli: lib/journal/index.ts -> lib/cli/start.ts',
            'error postgres-imports-no-sqlite: lib/storage/postgres/open.ts -> lib/storage/sqlite/pragmas.ts',
            'error sqlite-imports-no-postgres: lib/storage/sqlite/open.ts -> lib/storage/postgres/pool.ts',
            'error storage-imports-no-namespace: lib/storage/reads-namespace.ts -> lib/namespaces/notes/index.ts'
        ]);

        // The imports no rule refuses were cruised all the same.
        const edges = result.modules.flatMap((module) => module.dependencies.map((dependency) => `${module.source} -> ${dependency.resolved}`));
        expect(edges).to.include([
            'lib/events/dispatcher.ts -> lib/journal/index.ts',
            'lib/events/dispatcher.ts -> lib/events/model.ts',
            'lib/namespaces/other/index.ts -> lib/namespaces/namespace.ts',
            'lib/namespaces/notes/index.ts -> lib/namespaces/notes/rules.ts',
            'lib/namespaces/notes/index.ts -> lib/storage/engine.ts',
            'lib/cli.ts -> lib/cli/start.ts',
            'lib/cli/start.ts -> lib/events/index.ts'
        ]);
        expect(result.summary.totalCruised).to.equal(20);
    });
});
