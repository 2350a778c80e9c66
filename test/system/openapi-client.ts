import ChildProcess from 'node:child_process';
import Fs from 'node:fs';
import Path from 'node:path';

import Boom from '@hapi/boom';
import Code from '@hapi/code';
import type { Request, ResponseObject, Server } from '@hapi/hapi';
import Lab from '@hapi/lab';
import openapiTS, { astToString } from 'openapi-typescript';
import Ts from 'typescript';

import { mintToken } from '../../lib';
import { documentPath } from '../../lib/openapi';
import { errorSchema } from '../../lib/openapi/error-responses';
import { tempDir, testServer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const generatedDir = Path.join(__dirname, '..', 'generated');
// A .ts module rather than a .d.ts: lab loads every file under test/, and cannot load a declaration file.
const generatedTypes = Path.join(generatedDir, 'localgate.ts');
const flowsFile = Path.join(__dirname, '..', 'client', 'flows.ts');

// What walkFlows (test/client/flows.ts) returns, as far as these tests read it. The flows file itself is
// not imported here: it needs the generated types, which exist only once the first test has run.
type Row = Record<string, unknown> & { id: string };

interface FlowResults {
    products: Row[];
    total: number;
    businessId: string;
    businessProducts: Row[];
    created: Row;
    createdLocation: string | null;
    report: Row;
    repeatedReport: { status: number; error: Record<string, unknown> };
    reported: Row;
    booking: Row;
    overlap: { status: number; error: Record<string, unknown> };
    ownBookings: Row[];
    othersBookings: Row[];
    payStatus: Record<string, unknown>;
    wallet: { status: number; error: Record<string, unknown> };
}

interface Operation {
    responses: Record<string, unknown>;
}

interface Observed {
    route: string;
    status: number;
    payload: unknown;
}


/** The project's own compiler options (strict), for a program that only type-checks. */
function compilerOptions(): Ts.CompilerOptions {

    const configFile = Path.join(__dirname, '..', '..', 'tsconfig.json');
    const { config } = Ts.readConfigFile(configFile, (file) => Ts.sys.readFile(file));
    const { options } = Ts.parseJsonConfigFileContent(config, Ts.sys, Path.dirname(configFile));
    return { ...options, noEmit: true, strict: true, noUnusedLocals: true, sourceMap: false };
}


/** The type errors of a program made of the given files, one line each; extra files live in memory. */
function typeErrors(rootNames: string[], inMemory: Record<string, string> = {}, overrides: Ts.CompilerOptions = {}): string[] {

    const options = { ...compilerOptions(), ...overrides };
    const host = Ts.createCompilerHost(options);
    const readFile = host.readFile.bind(host);
    const getSourceFile = host.getSourceFile.bind(host);
    host.fileExists = (file) => file in inMemory || Ts.sys.fileExists(file);
    host.readFile = (file) => inMemory[file] ?? readFile(file);
    host.getSourceFile = (file, language, ...rest) => {

        return file in inMemory ? Ts.createSourceFile(file, inMemory[file]!, language) : getSourceFile(file, language, ...rest);
    };

    const program = Ts.createProgram({ rootNames: [...rootNames, ...Object.keys(inMemory)], options, host });
    return Ts.getPreEmitDiagnostics(program).map((diagnostic) => {

        const where = diagnostic.file ? `${Path.relative(process.cwd(), diagnostic.file.fileName)}:${diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start!).line + 1} ` : '';
        return where + Ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    });
}


describe('a client generated from the OpenAPI document', { timeout: 30_000 }, () => {

    let server: Server;
    let baseUrl: string;
    let document: { paths: Record<string, Record<string, Operation>> };
    const observed: Observed[] = [];

    before(async () => {

        server = await testServer({ port: 0, host: '127.0.0.1' });
        server.events.on('response', (request: Request) => {

            const response = request.response as ResponseObject | Boom.Boom;
            const [status, payload] = Boom.isBoom(response) ? [response.output.statusCode, response.output.payload] : [response.statusCode, response.source];
            observed.push({ route: `${request.route.method} ${request.route.path}`, status, payload });
        });

        await server.start();
        baseUrl = server.info.uri;
        document = await (await fetch(baseUrl + documentPath)).json() as typeof document;
    });

    after(async () => {

        await server.stop();
    });

    it('generates types from the served document that the flows compile against', { timeout: 120_000 }, async () => {

        // A default (description: '') makes a body field optional to send, not required: as the API takes it.
        const ast = await openapiTS(new URL(baseUrl + documentPath), { defaultNonNullable: false });
        Fs.mkdirSync(generatedDir, { recursive: true });
        Fs.writeFileSync(generatedTypes, astToString(ast));

        expect(typeErrors([flowsFile])).to.equal([]);
    });

    it('fails to compile flows that do not fit the document', { timeout: 120_000 }, () => {

        const misfit = Path.join(__dirname, '..', 'client', 'misfit.ts');
        const errors = typeErrors([], {
            [misfit]: [
                'import { localgateClient } from \'./flows\';',
                'export async function misfit(): Promise<void> {',
                '    const client = localgateClient(\'http://127.0.0.1:1\');',
                '    await client.GET(\'/v1/commerce/no-such-path\', {});',
                '    await client.POST(\'/v1/commerce/products\', { body: { name: \'No price\', currency: \'USD\', business_id: \'b\' } });',
                '    const { data } = await client.GET(\'/v1/logistics/vehicles\');',
                '    console.log(data?.data[0]?.colour);',
                '}'
            ].join('\n')
        });

        expect(errors).to.have.length(3);
        expect(errors.join('\n')).to.contain('no-such-path').and.to.contain('price').and.to.contain('colour');
    });

    it('walks the main flows through openapi-fetch against the listening server', { timeout: 60_000 }, async () => {

        const { walkFlows } = await import(flowsFile) as { walkFlows: (url: string, tokens: { alice: string; bob: string }) => Promise<FlowResults> };

        const secret = server.app.localgate.secret;
        const results = await walkFlows(baseUrl, { alice: mintToken(secret, 'alice'), bob: mintToken(secret, 'bob') });

        expect(results.products.length).to.be.above(1);
        expect(results.total).to.equal(35);
        expect(results.products.length).to.equal(35);
        expect(results.businessProducts.length).to.be.above(0);
        expect(results.businessProducts.every((product) => product.business_id === results.businessId)).to.be.true();
        expect(results.businessProducts.length).to.be.below(results.total);

        expect(results.created).to.include({ name: 'Typed client kettle', price: 24.5, currency: 'USD', business_id: results.businessId, created_by: 'alice', scam_report_count: 0 });
        expect(results.createdLocation).to.equal(`/v1/commerce/products/${results.created.id}`);
        expect(results.report).to.include({ target_type: 'product', target_id: results.created.id, reporter_id: 'bob' });
        expect(results.repeatedReport.status).to.equal(409);
        expect(results.repeatedReport.error).to.include({ statusCode: 409, code: 'duplicate_scam_report' });
        expect(results.reported.scam_report_count).to.equal(1);

        expect(results.booking).to.include({ customer_id: 'alice', status: 'confirmed', pickup_at: '2031-03-01T09:00:00.000Z', notes: 'Child seat, please' });
        expect(results.overlap.status).to.equal(409);
        expect(results.overlap.error).to.include({ statusCode: 409, code: 'booking_overlap' });
        expect(results.ownBookings.map((booking) => booking.id)).to.equal([results.booking.id]);
        expect(results.othersBookings).to.equal([]);

        expect(results.payStatus).to.equal({ configured: false, schema_ready: false, sections: ['wallet', 'tokens', 'gateway'] });
        expect(results.wallet.status).to.equal(501);
        expect(results.wallet.error).to.include({ statusCode: 501, code: 'pay_not_provisioned', configured: false, schema_ready: false });
    });

    it('saw only statuses the document lists for each operation, and error bodies of the documented shape', () => {

        const flowRoutes = new Set(observed.filter(({ route }) => route.includes('/v1/')).map(({ route }) => route));
        expect([...flowRoutes].sort()).to.equal([
            'get /v1/commerce/products',
            'get /v1/commerce/products/{product_id}',
            'get /v1/logistics/bookings',
            'get /v1/logistics/locations',
            'get /v1/logistics/vehicles',
            'get /v1/pay/status',
            'get /v1/pay/wallet',
            'post /v1/commerce/products',
            'post /v1/commerce/scam-reports',
            'post /v1/logistics/bookings'
        ]);

        for (const { route, status, payload } of observed.filter((entry) => entry.route.includes('/v1/'))) {
            const [method, path] = route.split(' ') as [string, string];
            const operation = document.paths[path]![method]!;
            expect(Object.keys(operation.responses), `${route} answered ${status}`).to.include(String(status));
            if (status >= 400) {
                expect(errorSchema.validate(payload).error, `${route} ${status} body`).to.not.exist();
            }
        }
    });
});


// A second generator, with its own reading of the document: names, enums and nested objects must suit both.
const heyApiCli = require.resolve('@hey-api/openapi-ts/package.json').replace(/package\.json$/, Path.join('bin', 'run.js'));


describe('a client generated by @hey-api/openapi-ts from the served document', () => {

    let outDir: string;
    // Where a browser or Node client compiles: the DOM's fetch types beside the language's, outside this project.
    const clientOptions = (): Ts.CompilerOptions => ({ rootDir: Path.dirname(outDir), lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'] });

    before({ timeout: 120_000 }, async () => {

        const server = await testServer();
        const document = (await server.inject(documentPath)).payload;
        await server.stop();

        const dir = tempDir('localgate-hey-api-');
        outDir = Path.join(dir, 'client');
        Fs.writeFileSync(Path.join(dir, 'openapi.json'), document);
        // The generator is an ES module with a command line: run it as a user would, from the file, offline.
        const run = ChildProcess.spawnSync(process.execPath, [heyApiCli, '-i', Path.join(dir, 'openapi.json'), '-o', outDir, '-c', '@hey-api/client-fetch', '-s', '--no-log-file'], { encoding: 'utf8' });
        expect(run.status, run.stderr).to.equal(0);
    });

    // A program using the generated client, reading the given namespace of /health.
    const usage = function (read: string): string {

        return `
        import { createClient } from './client/client';
        import { getHealth, getV1CommerceProducts } from './client/sdk.gen';
        import type { NamespaceHealth, Product } from './client/types.gen';

        export async function commerceState(baseUrl: string): Promise<NamespaceHealth['state'] | undefined> {

            const client = createClient({ baseUrl });
            const { data } = await getHealth({ client });
            return data?.namespaces.${read}.state;
        }

        export async function firstProduct(baseUrl: string): Promise<Product | undefined> {

            const { data } = await getV1CommerceProducts({ client: createClient({ baseUrl }), query: { limit: 1 } });
            return data?.data[0];
        }
        `;
    };

    it('compiles under strict TypeScript with zero errors, reading namespaces.commerce from /health', { timeout: 120_000 }, () => {

        const generated = Fs.readdirSync(outDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts')).map((file) => Path.join(outDir, file));
        expect(generated.length).to.be.above(5);
        expect(typeErrors(generated, { [Path.join(outDir, '..', 'usage.ts')]: usage('commerce') }, clientOptions())).to.equal([]);
    });

    it('refuses a namespace the document does not describe', { timeout: 120_000 }, () => {

        const errors = typeErrors([], { [Path.join(outDir, '..', 'usage.ts')]: usage('nowhere') }, clientOptions());
        expect(errors).to.have.length(1);
        expect(errors[0]).to.contain('Property \'nowhere\' does not exist');
    });
});
