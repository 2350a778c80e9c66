import type { Server } from '@hapi/hapi';

import { mintToken } from '../auth';
import { eventTypesOf } from '../outbox';
import { newInstanceSchema } from '../instances/schemas';
import type { ScenarioRules } from './file';
import type { Answer, Exchange, RunTarget } from './run';


// Where a scenario plays inside a server: each request injected into the server's own routes, so that it takes every
// step a request from outside takes (auth, validation, faults, the journal) without a socket.

/** What a server's scenarios are checked against: the event types its namespaces write, the body of POST /_instances. */
export function scenarioRules(server: Server): ScenarioRules {

    const { namespaces } = server.app.localgate.settings;
    return { types: eventTypesOf(namespaces), instance: newInstanceSchema(namespaces) };
}


/** A run on a data set of the server: the default one (instanceId null) or an instance. */
export function serverTarget(server: Server, instanceId: string | null): RunTarget {

    const { secret, settings } = server.app.localgate;
    return {
        basePath: instanceId === null ? '' : `/i/${instanceId}`,
        admin: (name) => (instanceId === null ? `/_${name}` : `/_instances/${instanceId}/${name}`),
        token: (actor) => mintToken(secret, actor.sub, 3600, { admin: actor.admin }),
        // Loaded at a run's first webhooks, not as the server starts: the receiver's verifying library takes time to load.
        receiver: async () => (await import('../webhook-receiver')).startReceiver({ types: eventTypesOf(settings.namespaces) }),
        send: (exchange) => injected(server, exchange)
    };
}


async function injected(server: Server, exchange: Exchange): Promise<Answer> {

    const res = await server.inject({ method: exchange.method, url: exchange.url, headers: exchange.headers, payload: exchange.payload });
    return { status: res.statusCode, headers: res.headers, body: answerBody(res.payload, res.headers['content-type']) };
}


/** An answer's body as a step reads it: parsed when it is JSON, else its text (null when empty). */
export function answerBody(text: string, contentType: string | string[] | number | undefined): unknown {

    if (text === '') {
        return null;
    }

    if (typeof contentType === 'string' && /^application\/(?:[\w.+-]*\+)?json\b/.test(contentType)) {
        try {
            return JSON.parse(text);
        }
        catch {
            return text;
        }
    }

    return text;
}
