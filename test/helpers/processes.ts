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


/** Runs the CLI to completion and returns its exit code and output. */
export function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {

    return new Promise((resolve) => {

        ChildProcess.execFile(process.execPath, [binPath, ...args], { env: { PATH: process.env.PATH, LOG_LEVEL: 'silent', ...env } }, (err, stdout, stderr) => {

            resolve({ code: err ? (err as unknown as { code: number }).code : 0, stdout, stderr });
        });
    });
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
