import Crypto from 'node:crypto';
import Fs from 'node:fs';
import Os from 'node:os';
import Path from 'node:path';

import type { Server, ServerInjectResponse } from '@hapi/hapi';

import { createServer, mintToken, type Options } from '../../lib';


/** A fresh in-memory server with responses validated against their schemas; stop it in an after(). */
export function testServer(options: Options = {}): Promise<Server> {

    return createServer({
        dataDir: ':memory:',
        logLevel: 'silent',
        jwtSecret: Crypto.randomBytes(32).toString('hex'),
        validateResponses: true,
        ...options
    });
}


/** Authorization headers carrying a freshly minted token for a subject, signed with the server's secret. */
export function bearer(server: Server, subject: string, ttlSec?: number): { authorization: string } {

    return { authorization: `Bearer ${mintToken(server.app.localgate.secret, subject, ttlSec)}` };
}


/** A new empty directory under the system's temp folder. */
export function tempDir(prefix = 'localgate-test-'): string {

    return Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix));
}


/** The parsed JSON body of an injected response. */
export function body<T = Record<string, unknown>>(res: ServerInjectResponse): T {

    return JSON.parse(res.payload) as T;
}
