import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';

import { main } from '../lib/cli';
import { builtInNamespaces } from '../lib/namespaces';
import { eventTypesOf } from '../lib/outbox';
import { createTestKit, type TestKit } from '../lib/testing';
import { adminBearer, body, tempDir, testServer } from './helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const builtIns = Path.join(__dirname, '..', 'data', 'scenarios');
const types = eventTypesOf(builtInNamespaces);


describe('The built-in scenarios of localgate trigger', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit({ memoryPay: true });
    });

    after(() => kit.close());

    it('are one per event type of the catalogue', () => {

        expect(Fs.readdirSync(builtIns).sort()).to.equal(types.map((type) => `${type}.yaml`).sort());
    });

    const makes = async (type: string) => {

        const run = await kit.scenario(Path.join(builtIns, `${type}.yaml`));
        expect(run.ok).to.equal(true);
        expect(String(run.steps.at(-1)?.line)).to.startWith(`event ${type} `);
    };

    for (const type of types) {
        it(`make ${type} happen through the API`, () => makes(type));
    }
});


describe('localgate trigger', () => {

    const secret = 'c'.repeat(64);
    let url: string;
    let close: () => Promise<void>;
    let admin: { authorization: string };
    let inject: (options: { method?: string; url: string; payload?: object }) => Promise<{ statusCode: number; payload: string }>;

    before(async () => {

        const server = await testServer({ memoryPay: true, jwtSecret: secret });
        await server.start();
        url = server.info.uri;
        admin = adminBearer(server);
        inject = (options) => server.inject({ ...options, headers: admin });
        close = () => server.stop();
    });

    after(() => close());

    const run = async (argv: string[], env: NodeJS.ProcessEnv = {}) => {

        const out: string[] = [];
        const err: string[] = [];
        const flags = env.PORT === undefined ? ['--url', url] : [];
        const code = await main(['trigger', ...argv, ...flags], { AUTH_JWT_SECRET: secret, DATA_DIR: tempDir(), ...env }, { out: (line) => out.push(line), err: (line) => err.push(line) });
        return { code, out, err };
    };

    it('reaches the server of PORT without --url', async () => {

        const { code, out } = await run(['logistics.booking.cancelled'], { PORT: new URL(url).port });
        expect(code).to.equal(0);
        expect(out).to.include('Events it caused (2):');
    });

    it('makes the event on a fresh instance it keeps, and prints the events it caused', async () => {

        const { code, out } = await run(['pay.transaction.completed']);
        expect(code).to.equal(0);
        expect(out[0]).to.equal('✓ A bank transfer settles (data/scenarios/pay.transaction.completed.yaml)');
        const caused = out.indexOf('Events it caused (2):');
        expect(out.slice(caused + 1, caused + 3).map((line) => line.split(' ')[2])).to.equal(['pay.transaction.created', 'pay.transaction.completed']);
        const id = /^Instance: ([\w-]+) /.exec(String(out.at(-1)))?.[1];
        const instance = await inject({ url: `/_instances/${id}` });
        expect(body(instance as never)).to.include({ pay: true, clock: '2030-01-03T00:00:00.000Z' });
    });

    it('overrides the body of the request that makes the event with --set', async () => {

        const returned = await run(['pay.transaction.completed', '--set', 'amount=1099', '--set', 'metadata.order_id=o-1', '--set', 'metadata.note=a b']);
        expect(returned.code).to.equal(1);
        expect(returned.out).to.include('      Step 3 failed: event pay.transaction.completed: the event log holds no pay.transaction.completed event');
        expect(returned.out.filter((line) => line.startsWith('  pay.transaction.')).map((line) => line.split(' ')[2])).to.equal(['pay.transaction.created', 'pay.transaction.failed']);

        // A field of another shape is replaced by a map.
        const shaped = await run(['commerce.product.created', '--set', 'name=Rye', '--set', 'currency=null', '--set', 'currency.x=1', '--set', 'tags=[1]', '--set', 'tags.a=1']);
        expect(shaped.code).to.equal(1);
        expect(shaped.out[1]).to.equal('    1 ✗ POST /v1/commerce/products 400  · Alice adds a loaf to Harbourside Bakery');
    });

    it('runs on an instance as it stands, and counts only what it caused there', async () => {

        const made = await inject({ method: 'POST', url: '/_instances', payload: { ids: 'sequential' } });
        const id = body<{ id: string }>(made as never).id;
        const first = await run(['commerce.business.flagged', '--instance', id]);
        expect(first.code).to.equal(0);
        expect(first.out).to.include('Events it caused (2):');
        expect(String(first.out.at(-1))).to.startWith(`Instance: ${id} `);

        // One report per caller and target: the second is refused, and nothing is written.
        const second = await run(['commerce.business.flagged', '--instance', id]);
        expect(second.code).to.equal(1);
        expect(second.out).to.include('It caused no event.');

        const gone = await run(['commerce.product.created', '--instance', 'no-such-instance']);
        expect(gone.code).to.equal(1);
        expect(String(gone.err[0])).to.startWith('localgate: There is no instance "no-such-instance"');
    });

    it('says an event type it has no scenario for, a bad --set and an empty --instance', async () => {

        const unknown = await run(['pay.transaction.lost']);
        expect(unknown.code).to.equal(2);
        expect(unknown.err[0]).to.equal(`localgate: trigger takes one event type: ${types.join(', ')}`);
        expect((await run([])).code).to.equal(2);
        expect((await run(['pay.transaction.created', 'pay.transaction.failed'])).code).to.equal(2);
        expect((await run(['pay.transaction.created', '--set', 'amount'])).err[0]).to.equal('localgate: --set takes field=value, the field a dotted path such as amount or metadata.order_id, not "amount"');
        expect((await run(['pay.transaction.created', '--set', '=1'])).code).to.equal(2);
        expect((await run(['pay.transaction.created', '--set', 'a..b=1'])).code).to.equal(2);
        expect((await run(['pay.transaction.created', '--set', '__proto__.polluted=1'])).err[0]).to.equal('localgate: --set cannot set __proto__.polluted: __proto__, prototype and constructor are no fields of a body');
        expect(({} as { polluted?: unknown }).polluted).to.not.exist();
        expect((await run(['pay.transaction.created', '--instance', ' '])).err[0]).to.equal('localgate: --instance must name an instance id, such as the id POST /_instances answered');
    });
});
