import type { Request } from '@hapi/hapi';
import type HapiPino from 'hapi-pino';
import Pino from 'pino';

import type { Settings } from './config';
import { prettyLogStream } from './pretty-log';
import { scrubText } from './secrets';


/**
 * How the server logs: one JSON line per request through pino at LOG_LEVEL, to the given stream or standard output,
 * pretty when asked; no header, so no token, is logged, and paths and errors are scrubbed of the given secrets.
 */
export function loggingOptions(settings: Settings, secrets: string[]): HapiPino.Options {

    return {
        level: settings.logLevel,
        stream: logStream(settings) as NodeJS.WriteStream | undefined,
        // The serializers take hapi's request and node's response as they are, rather than pino's copies of them
        // (headers included) made on every request only to be narrowed down here: no header, so no token, is logged.
        wrapSerializers: false,
        // The message names the path as the client sent it too: under an instance, after its base path (no scope yet
        // when the instance was unknown, and the path is still the one sent).
        // Paths and error messages can carry what a client sent: tokens and secrets are hidden as the journal hides them.
        customRequestCompleteMessage: (request: Request, responseTime: number) => `[response] ${request.method} ${scrubText(`${request.app.scope?.basePath ?? ''}${request.path}`, secrets)} ${request.raw.res.statusCode} (${responseTime}ms)`,
        serializers: {
            // hapi-pino serializes the request in its onRequest step, before an instance path is rewritten: the
            // logged path is the one the client sent, base path included.
            req: (request: Request) => ({ id: request.info.id, method: request.method, url: scrubText(request.path, secrets) }),
            res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
            // An error's name, message and stack only: its other fields (a Boom's data, a parser error's raw
            // bytes) can carry what a client sent.
            err: (err: Error) => ({ type: err.name, message: scrubText(err.message, secrets), stack: scrubText(String(err.stack), secrets) })
        }
    };
}


// Where log lines go: the stream given in code, else standard output (none when silent); as pretty lines when asked.
function logStream(settings: Settings): { write(text: string): unknown } | undefined {

    const pretty = settings.logFormat === 'pretty';
    if (settings.logStream) {
        return pretty ? prettyLogStream(settings.logStream) : settings.logStream;
    }

    if (settings.logLevel === 'silent') {
        return undefined;
    }

    // pino writes to standard output synchronously by default: a system call for every request's line.
    // Buffered, the lines of concurrent requests go out together; pino flushes the rest when the process exits.
    // Pretty lines are for a person at a terminal, where they go out as they come.
    return pretty ? prettyLogStream(process.stdout) : Pino.destination({ dest: 1, sync: false });
}
