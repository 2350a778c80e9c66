import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { type Finished, runProcess } from '../helpers/processes';
import { tempDir } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


// Runs examples/ as a user does: each copied into a project of its own, where node_modules/localgate is this package
// as `npm test` has just built it, and run with the test script of its own package.json.

const root = Path.join(__dirname, '..', '..');

// What each example installs beside localgate, taken from this repo's node_modules.
const installs: Record<string, { packages: string[]; bins: Record<string, string> }> = {
    'node-test': { packages: [], bins: {} },
    'lab': {
        packages: ['@hapi/code', '@hapi/lab', '@types/node', 'typescript'],
        bins: { lab: '@hapi/lab/bin/lab', tsc: 'typescript/bin/tsc' }
    }
};


/** Copies an example into dir and links its packages as npm would install them. */
function install(name: string, dir: string): string {

    const project = Path.join(dir, name);
    Fs.cpSync(Path.join(root, 'examples', name), project, { recursive: true });
    const modules = Path.join(project, 'node_modules');
    for (const pkg of ['localgate', ...installs[name]!.packages]) {
        Fs.mkdirSync(Path.dirname(Path.join(modules, pkg)), { recursive: true });
        Fs.symlinkSync(pkg === 'localgate' ? root : Path.join(root, 'node_modules', pkg), Path.join(modules, pkg), 'dir');
    }

    Fs.mkdirSync(Path.join(modules, '.bin'));
    for (const [bin, target] of Object.entries(installs[name]!.bins)) {
        Fs.symlinkSync(Path.join(modules, target), Path.join(modules, '.bin', bin));
    }

    return project;
}


/** Runs the project's `npm test` script the way npm runs it: in a shell, with node_modules/.bin on the PATH. */
function runTestScript(project: string): Promise<Finished> {

    const script = (JSON.parse(Fs.readFileSync(Path.join(project, 'package.json'), 'utf8')) as { scripts: { test: string } }).scripts.test;
    const env = { PATH: `${Path.join(project, 'node_modules', '.bin')}${Path.delimiter}${process.env.PATH}`, HOME: process.env.HOME };

    return runProcess('sh', ['-c', script], { cwd: project, env });
}


describe('the examples, run as written against the built package', { timeout: 60_000 }, () => {

    let dir: string;

    before(() => {

        dir = tempDir('localgate-examples-');
    });

    after(() => Fs.rmSync(dir, { recursive: true, force: true }));

    it('runs the node:test example with node --test', async () => {

        const ran = await runTestScript(install('node-test', dir));
        expect(ran.code, ran.output).to.equal(0);
        expect(ran.output).to.contain('# pass 2\n');
        expect(ran.output).to.contain('# fail 0\n');
    });

    it('type-checks the lab example under its tsconfig and runs it with lab --typescript', async () => {

        const ran = await runTestScript(install('lab', dir));
        expect(ran.code, ran.output).to.equal(0);
        expect(ran.output).to.contain('1 tests complete');
    });
});
