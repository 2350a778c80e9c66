import ChildProcess from 'node:child_process';
import Path from 'node:path';


export const binPath = Path.join(__dirname, '..', '..', 'bin', 'localgate.js');

export interface SpawnedServer {
    url: string;
    pid: number;
    output: () => string;
    stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}


/** Starts `localgate start` in a child process (needs `npm run build`) and resolves once it listens. */
export function spawnServer(env: NodeJS.ProcessEnv, args: string[] = []): Promise<SpawnedServer> {

    return spawnListening(process.execPath, [binPath, 'start', '--port', '0', ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } });
}


/**
 * Runs a command that starts localgate and resolves once it prints the URL it listens on. With group, the command
 * leads its own process group and stop() signals the whole group: npx does not pass SIGTERM on to the server it runs.
 */
export function spawnListening(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string; group?: boolean }): Promise<SpawnedServer> {

    const child = ChildProcess.spawn(command, args, { env: options.env, cwd: options.cwd, detached: options.group, stdio: ['ignore', 'pipe', 'pipe'] });

    let output = '';
    // 'close' waits for every process holding the output pipes, so also for a server that npx started.
    const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));

    return new Promise((resolve, reject) => {

        let listening = false;
        child.stdout.on('data', (chunk: Buffer) => {

            output += chunk.toString();
            const match = /listening on (http:\/\/\S+)/.exec(output);
            if (match && !listening) {
                listening = true;
                resolve({
                    url: match[1]!,
                    pid: child.pid!,
                    output: () => output,
                    stop: (signal = 'SIGTERM') => {

                        if (options.group) {
                            process.kill(-child.pid!, signal);
                        }
                        else {
                            child.kill(signal);
                        }

                        return exited;
                    }
                });
            }
        });
        child.stderr.on('data', (chunk: Buffer) => {

            output += chunk.toString();
        });
        exited.then((code) => reject(new Error(`${command} exited with ${code} before listening: ${output}`)));
    });
}


/** What a command left when it ended: its exit code (null when a signal ended it) and its output. */
export interface Finished {
    code: number | null;
    stdout: string;
    stderr: string;
    /** stdout and stderr together, in the order they came. */
    output: string;
}


/** Runs a command to its end; resolves, never rejects, with its exit code and output, however it ended. */
export function runProcess(command: string, args: string[], options: { env: NodeJS.ProcessEnv; cwd?: string }): Promise<Finished> {

    return new Promise((resolve) => {

        const child = ChildProcess.spawn(command, args, { env: options.env, cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
        const finished: Finished = { code: null, stdout: '', stderr: '', output: '' };
        child.stdout.on('data', (chunk: Buffer) => {

            finished.stdout += chunk.toString();
            finished.output += chunk.toString();
        });
        child.stderr.on('data', (chunk: Buffer) => {

            finished.stderr += chunk.toString();
            finished.output += chunk.toString();
        });
        // A command that cannot start (not installed) says so in its output; 'close' follows with a code.
        child.once('error', (err) => {

            finished.stderr += err.message;
            finished.output += err.message;
        });
        child.once('close', (code) => resolve({ ...finished, code }));
    });
}


/** Runs the CLI to completion and returns its exit code and output. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Finished> {

    return runProcess(process.execPath, [binPath, ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } });
}


/** How many replies came back with each status and error code: { '201': 1, '409 booking_overlap': 299 }. */
export function statusCounts(replies: { status: number; body: { code?: unknown } }[]): Record<string, number> {

    const counts: Record<string, number> = {};
    for (const reply of replies) {
        const key = `${reply.status} ${String(reply.body.code ?? '')}`.trim();
        counts[key] = (counts[key] ?? 0) + 1;
    }

    return counts;
}
