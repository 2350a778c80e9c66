import Fs from 'node:fs';
import Path from 'node:path';

import Code from '@hapi/code';
import Lab from '@hapi/lab';
import type { ServerInjectOptions, ServerInjectResponse } from '@hapi/hapi';

import { mintToken } from '../../lib';
import { mintPayKeys } from '../../lib/storage/pay-keys';
import { createTestKit } from '../../lib/testing';
import { engineServer, skipWithoutPostgres, templateDatabase } from '../helpers/postgres';
import { renameIds } from '../helpers/ids';
import { adminBearer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;


// The frozen-clock scenario of `npm run bench` (bench/time-scenario.json: deposits through each provider, withdrawals
// held and returned, bookings that start and end, offers read expired, the clock advanced and set back) played twice on
// fresh worlds gives the same answers, byte for byte. On SQLite the instances draw their ids from a counter; on
// PostgreSQL, where the default data set's ids are random, each id is renamed by its order of first appearance first.

/** A request of a subject (none: no token), with an Idempotency-Key where it moves money. */
interface Request {
    as?: string;
    method: string;
    url: string;
    key?: string;
    payload?: object;
}

type Move = { advance: string } | { now: string };

type Step = Request | Move;

interface Scenario {
    clock: string;
    steps: Step[];
}

/** A world the scenario is played in: its requests, and a move of its clock answering what the move applied. */
interface Stage {
    inject(options: ServerInjectOptions): Promise<ServerInjectResponse>;
    token(subject: string): string;
    move(to: Move): Promise<string>;
}


const scenario: Scenario = JSON.parse(Fs.readFileSync(Path.join(__dirname, '..', '..', 'bench', 'time-scenario.json'), 'utf8'));


function isMove(step: Step): step is Move {

    return 'advance' in step || 'now' in step;
}


/** Plays every step; answers each step's status and body as text, the clock's moves as what they answered. */
async function play(stage: Stage): Promise<string[]> {

    const answers: string[] = [];
    for (const step of scenario.steps) {
        if (isMove(step)) {
            answers.push(await stage.move(step));
            continue;
        }

        const headers: Record<string, string> = {};
        if (step.as !== undefined) {
            headers.authorization = `Bearer ${stage.token(step.as)}`;
        }

        if (step.key !== undefined) {
            headers['idempotency-key'] = step.key;
        }

        const res = await stage.inject({ method: step.method, url: step.url, headers, payload: step.payload });
        answers.push(`${step.method} ${step.url} ${res.statusCode} ${res.payload}`);
    }

    return answers;
}


// What each move of the clock applies: the same on both engines.
const moves = [
    // A second after each request that writes, so that the records they make sort by their created_at on both engines.
    ...Array.from({ length: 13 }, () => ({})),
    // +3h: the first booking starts.
    { 'logistics.booking.started': 1 },
    // +1d: the withdrawal of 200 settles; the first booking ends.
    { 'pay.transaction.completed': 1, 'logistics.booking.completed': 1 },
    // +2d: the deposits of 700 and 250 EUR settle, 399 is returned; the second booking starts. An offer ends too, which
    // its reads show and no move applies.
    { 'pay.transaction.completed': 2, 'pay.transaction.failed': 1, 'logistics.booking.started': 1 },
    // A second after each of the two moves made then.
    {},
    {},
    // +1d: the withdrawal of 1299 is returned; the second booking ends.
    { 'logistics.booking.completed': 1, 'pay.transaction.failed': 1 },
    // Back to the start: nothing applies, nothing is undone.
    {}
];


/** The moves' answers, in order, as objects. */
function applied(answers: string[]): object[] {

    return answers.flatMap((answer, i) => {

        const step = scenario.steps[i];
        return step && isMove(step) ? [JSON.parse(answer).applied] : [];
    });
}


describe('a frozen-clock scenario played twice', { timeout: 60_000 }, () => {

    it('answers the same bytes both times on SQLite instances with sequential ids', async () => {

        const kit = await createTestKit({ validateResponses: true });
        try {
            const playOnce = async (): Promise<string[]> => {

                const instance = await kit.instance({ pay: true, clock: scenario.clock, ids: 'sequential' });
                const admin = adminBearer(kit.server);
                const answers = await play({
                    inject: (options) => instance.inject(options),
                    token: (subject) => instance.token(subject),
                    move: async (to) => {

                        const res = await kit.server.inject({ method: 'PUT', url: `/_instances/${instance.id}/clock`, headers: admin, payload: to });
                        expect(res.statusCode).to.equal(200);
                        const { clock, applied: counts } = JSON.parse(res.payload);
                        return JSON.stringify({ clock, applied: counts });
                    }
                });
                await instance.close();
                return answers;
            };

            const first = await playOnce();
            const second = await playOnce();
            expect(first).to.have.length(scenario.steps.length);
            expect(second).to.equal(first);
            expect(applied(first)).to.equal(moves);
            // Nothing in the answers failed unexpectedly: the refusals are the scenario's own.
            expect(first.filter((answer) => answer.startsWith('GET ') || answer.startsWith('POST ')).filter((answer) => !/ 20[01] /.test(answer)).map((answer) => answer.slice(0, answer.indexOf('{')))).to.equal([
                'POST /v1/pay/gateway/deposit 402 ',
                'POST /v1/pay/gateway/withdraw 409 '
            ]);
        }
        finally {
            await kit.close();
        }
    });

    it('answers the same bytes both times on PostgreSQL, once its random ids are renamed by their first appearance', { skip: skipWithoutPostgres('test/system/time-scenario.ts'), timeout: 120_000 }, async () => {

        const keys = mintPayKeys();
        const template = await templateDatabase({}, keys);
        try {
            const playOnce = async (): Promise<string[]> => {

                const server = await engineServer('postgres', { clock: scenario.clock }, template.name, keys);
                try {
                    const admin = adminBearer(server);
                    return renameIds(await play({
                        inject: (options) => server.inject(options),
                        token: (subject) => mintToken(server.app.localgate.secret, subject),
                        move: async (to) => {

                            const res = await server.inject({ method: 'PUT', url: '/_clock', headers: admin, payload: to });
                            expect(res.statusCode).to.equal(200);
                            return res.payload;
                        }
                    }));
                }
                finally {
                    await server.stop();
                }
            };

            const first = await playOnce();
            const second = await playOnce();
            expect(second).to.equal(first);
            expect(applied(first)).to.equal(moves);
        }
        finally {
            await template.drop();
        }
    });
});
