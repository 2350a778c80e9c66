import Crypto from 'node:crypto';
import Fs from 'node:fs';

import type { Server } from '@hapi/hapi';

import { mintToken } from '../auth';
import type { Settings } from '../config';
import { createServer } from '../index';
import { maxScenarioBytes } from '../scenarios/file';
import { junitReport, stepLines, tapReport, type FileRun } from '../scenarios/report';
import type { PlayedScenario } from '../scenarios/routes';
import { thrownMessage } from '../thrown';
import { adminClient, answeredBody } from './admin-client';
import { UsageError, type Command, type Io } from './command';


export const command: Command = {
    synopsis: 'localgate scenario run FILE... [--url URL] [--reporter tap|junit] [--out FILE]',
    flags: ['url', 'reporter', 'out'],
    explain: 'Runs each scenario file (YAML or JSON, docs/scenarios.md) on a fresh instance made with its instance block: of the server at --url, with an admin token minted from AUTH_JWT_SECRET as `localgate token --admin` does, or of a server it starts in memory for the run. Prints a line a step (✓ or ✗, its request and status or what it checked, the caption beside it) and, at the first step whose expectation is not met, the step, what was expected and what came; the files after it still run. Exits 1 when a file failed, 0 when all passed. --reporter tap or junit writes that report too, to --out FILE (standard output without it, after the lines).',
    run: (settings, args, values, io) => scenario(settings, args, values, io)
};

interface ScenarioFlags {
    url?: string;
    reporter?: string;
    out?: string;
}

/** Sends a scenario's text to POST /_scenarios/run and resolves to the run, or throws the server's refusal. */
type Runner = (text: string, type: string) => Promise<PlayedScenario>;


async function scenario(settings: Settings, args: string[], flags: ScenarioFlags, io: Io): Promise<number> {

    const [verb, ...files] = args;
    if (verb !== 'run') {
        throw new UsageError(`scenario takes run and the files to run, for example: npx localgate scenario run demo.yaml${verb === undefined ? '' : ` (not "${verb}")`}`);
    }

    if (!files.length) {
        throw new UsageError('scenario run needs at least one file, for example: npx localgate scenario run demo.yaml');
    }

    if (flags.reporter !== undefined && !['tap', 'junit'].includes(flags.reporter)) {
        throw new UsageError(`--reporter must be tap or junit, not "${flags.reporter}"`);
    }

    if (flags.out !== undefined && flags.reporter === undefined) {
        throw new UsageError('--out names where the --reporter writes its report: give --reporter tap or junit with it');
    }

    const { runner, close } = flags.url === undefined ? await inMemory() : remote(settings, flags.url);
    const runs: FileRun[] = [];
    try {
        for (const file of files) {
            const run = await runFile(file, runner);
            runs.push(run);
            for (const line of stepLines(run)) {
                io.out(line);
            }
        }
    }
    finally {
        await close();
    }

    if (flags.reporter !== undefined) {
        const report = flags.reporter === 'tap' ? tapReport(runs) : junitReport(runs);
        if (flags.out === undefined) {
            io.out(report.trimEnd());
        }
        else {
            Fs.writeFileSync(flags.out, report);
        }
    }

    const failed = runs.filter((run) => !run.run?.ok).length;
    io.out(`${runs.length - failed} of ${runs.length} scenario${runs.length === 1 ? '' : 's'} passed`);
    return failed ? 1 : 0;
}


async function runFile(file: string, runner: Runner): Promise<FileRun> {

    let text: string;
    try {
        const size = Fs.statSync(file).size;
        if (size > maxScenarioBytes) {
            return { file, run: null, error: `the file is larger than ${maxScenarioBytes / 2 ** 20} MiB, the most a scenario may hold` };
        }

        text = Fs.readFileSync(file, 'utf8');
    }
    catch (err) {
        return { file, run: null, error: `cannot read it: ${thrownMessage(err)}` };
    }

    try {
        // A .json file goes as JSON, which the server parses natively and takes up to 1 MiB of; any other as YAML.
        return { file, run: await runner(text, file.toLowerCase().endsWith('.json') ? 'application/json' : 'application/yaml'), error: null };
    }
    catch (err) {
        return { file, run: null, error: thrownMessage(err) };
    }
}


// A server of the run's own, in memory, with a provisioned pay namespace so that any instance block can be made.
async function inMemory(): Promise<{ runner: Runner; close: () => Promise<void> }> {

    const server = await createServer({ storage: 'memory', memoryPay: true, logLevel: 'silent', jwtSecret: Crypto.randomBytes(32).toString('hex'), port: 0 });
    const authorization = `Bearer ${mintToken(server.app.localgate.secret, 'localgate-scenario', 3600, { admin: true })}`;
    return {
        runner: async (text, type) => answeredBody<PlayedScenario>(await inject(server, text, type, authorization)),
        close: () => server.stop()
    };
}


async function inject(server: Server, text: string, type: string, authorization: string): Promise<{ status: number; body: unknown }> {

    const res = await server.inject({ method: 'POST', url: '/_scenarios/run', headers: { authorization, 'content-type': type }, payload: text });
    const body: unknown = JSON.parse(res.payload);
    return { status: res.statusCode, body };
}


function remote(settings: Settings, url: string): { runner: Runner; close: () => Promise<void> } {

    const client = adminClient(settings, url);
    return {
        runner: async (text, type) => answeredBody<PlayedScenario>(await client.call('POST', '/_scenarios/run', { type, text })),
        close: () => Promise.resolve()
    };
}
