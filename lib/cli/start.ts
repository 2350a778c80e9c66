import Path from 'node:path';

import type { LogFormat, Settings } from '../config';
import { errnoCode } from '../errno';
import { createServer } from '../index';
import { packageRoot } from '../paths';
import { databasesWhere } from '../storage';
import type { Command, Io } from './command';


export const command: Command = {
    synopsis: 'localgate start [--port N] [--host H] [--data-dir D | --memory [--memory-pay]] [--seed demo|none|F.json | --no-seed] [--log-level L] [--clock INSTANT]',
    flags: ['port', 'host', 'data-dir', 'memory', 'memory-pay', 'seed', 'no-seed', 'log-level', 'clock'],
    explain: 'Starts the service; PORT=0 (or --port 0) picks a free port. --seed (or SEED) names what empty databases get on start: demo (the default), none, or a fixture file such as an export, loaded only while none of the namespaces it fills holds a record (so a restart adds nothing). --memory keeps the databases in memory (the token secret stays in DATA_DIR, so `npx localgate token` works from another shell); --memory-pay gives it a provisioned pay namespace in memory. --clock (or CLOCK) freezes the default data set\'s clock at an ISO 8601 UTC instant until PUT /_clock moves it; on files it goes on from where it stood at the last stop.',
    run: (settings, args, values, io) => start({ ...settings, logFormat: logFormat(settings.logFormat, io.tty) }, io)
};


async function start(settings: Settings, io: Io): Promise<number> {

    const server = await createServer(settings);
    try {
        await server.start();
    }
    catch (err) {
        // Listening failed (the port is taken, say): close the databases before reporting it, with nothing logged
        // about a server that never served.
        server.logger.level = 'silent';
        await server.stop();
        if (errnoCode(err) === 'EADDRINUSE') {
            throw new Error(`port ${settings.port} on ${settings.host} is in use by another program: stop it, or set PORT=0 (or --port 0) to take a free port`);
        }

        throw err;
    }

    io.out(`localgate listening on ${server.info.uri} with databases ${await databasesWhere(settings)}`);
    io.out(`Mint a token: ${tokenCommand(process.cwd())} <subject>`);
    io.out(`Console: ${server.info.uri}/console`);

    return await new Promise<number>((resolve) => {

        const stop = async (signal: NodeJS.Signals) => {

            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            io.err(`localgate: ${signal} received, finishing requests in flight (at most ${settings.drainTimeoutMs} ms)`);
            await server.stop({ timeout: settings.drainTimeoutMs });
            resolve(0);
        };

        process.on('SIGINT', stop);
        process.on('SIGTERM', stop);
    });
}


/**
 * The token command that runs as typed where the server was started: in localgate's own clone, its script with node
 * (npx there installs the clone into npm's cache and reads its whole dependency tree first: seconds, not half of one);
 * anywhere else, npx, which finds the installed package's bin at once.
 */
export function tokenCommand(cwd: string): string {

    return Path.resolve(cwd) === packageRoot ? 'node bin/localgate.js token' : 'npx localgate token';
}


/** The log format a start uses: auto becomes pretty on a terminal, json elsewhere. */
export function logFormat(setting: LogFormat, tty: boolean | undefined): LogFormat {

    return setting === 'auto' ? (tty ? 'pretty' : 'json') : setting;
}
