import Boom from '@hapi/boom';
import type { Lifecycle, Request, ResponseObject, ResponseToolkit, Server, ServerRoute } from '@hapi/hapi';

import { callerId } from '../../auth';
import { failure, toBoom } from '../../errors';
import type { Metadata } from '../../metadata';
import { dataOf } from '../../scope';
import { createdResponse, listResponse, type Page } from '../../lists';
import type { ReadinessGap } from '../../storage/engine';
import type { Namespace } from '../../namespace';
import {
    gatewayPayload,
    idempotencyHeaders,
    noQuery,
    payStatusSchema,
    providerListSchema,
    tokenListSchema,
    tokenParams,
    tokenSchema,
    transactionListSchema,
    transactionParams,
    transactionSchema,
    transactionsQuery,
    walletSchema
} from './schemas';
import { sections, type GatewayOutcome, type GatewayRequest, type PayStatus, type PayStore } from './store';
import { always } from '../../always';


interface GatewayPayload {
    provider_id: string;
    asset: string;
    amount: number;
    metadata: Metadata;
}

const tags = ['api', 'pay'];


const gapMessages: Record<ReadinessGap, string> = {
    unconfigured: 'Pay is not configured: run `npx localgate provision pay` and export the PAY_DB_URL, PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY it prints',
    keys_differ: 'Pay is not configured: PAY_DB_PUBLISHABLE_KEY and PAY_DB_SECRET_KEY do not match the keys recorded in the pay database; set the pair it was provisioned with, or record these with `npx localgate provision pay`',
    no_schema: 'The pay database has no schema yet: run `npx localgate provision pay`'
};


function notProvisioned(gap: ReadinessGap): Boom.Boom {

    return failure(501, 'pay_not_provisioned', gapMessages[gap], { configured: gap === 'no_schema', schema_ready: false });
}


declare module '@hapi/hapi' {
    interface RequestApplicationState {
        payStore?: PayStore;
    }
}


/**
 * Runs before authentication: while the schema is not ready there is nothing behind a pay data endpoint, for anyone.
 * Readiness is read once per request (from the data set's cache, refreshed when it can have changed): the store found
 * here is the one the handler uses.
 */
function schemaGate(namespace: Namespace<PayStore>): Lifecycle.Method {

    return async (request, h) => {

        const readiness = await dataOf(request).readiness(namespace);
        if (!readiness.ready) {
            throw notProvisioned(readiness.gap);
        }

        request.app.payStore = readiness.store;
        return h.continue;
    };
}


/** The status record of /v1/pay/status for pay's readiness. */
export function payStatus(readiness: { ready: true } | { ready: false; configured: boolean }): PayStatus {

    return { configured: readiness.ready || readiness.configured, schema_ready: readiness.ready, sections };
}


/** The pay store the gate found for the request. */
function payStore(request: Pick<Request, 'app'>): PayStore {

    return always(request.app.payStore, 'the pay store the gate found');
}


/** The pay endpoints, served from the pay store of each request's data set. */
export function payRoutes(server: Server, namespace: Namespace<PayStore>): void {

    // A data route runs behind the gate; its document shows the 501 with the body an unconfigured pay answers.
    const ext = { onPreAuth: { method: schemaGate(namespace) } };
    const unprovisioned = notProvisioned('unconfigured');
    const gated = (errors: Record<number, string> = {}) => ({ ext, plugins: { localgate: { errors: { ...errors, 501: unprovisioned } } } });

    const gatewayRoute = (path: string, description: string, errors: Record<number, string>, move: (store: PayStore, ownerId: string, request: GatewayRequest) => Promise<GatewayOutcome>): ServerRoute<{ Payload: GatewayPayload; Headers: { 'idempotency-key': string } }> => ({
        method: 'POST',
        path,
        options: {
            description,
            notes: [
                'Through a provider that settles at once (sandbox, card) the transaction is completed as it is made.',
                'Through one with a delay (bank-transfer: deposits 2 days, withdrawals 1 day) it is pending until its settles_at, then completed or failed',
                '(failure_code returned: a bank-transfer amount ending in 99); a pending deposit is not spendable, a pending withdrawal holds its amount at once.',
                'Needs an Idempotency-Key header (1 to 255 printable ASCII characters), scoped to the caller and kept at least 24 hours after its move settles.',
                'Repeating the key with the same body replays the first response (status and body, as it was answered) with Idempotent-Replayed: true and moves no money;',
                'the same key with another body (another amount, other metadata) is a 422 idempotency_key_reused. metadata pairs count whatever their order.'
            ].join(' '),
            tags,
            ...gated({
                ...errors,
                422: 'provider_not_found (unknown provider_id), operation_not_supported, asset_not_supported (not an asset of the provider), idempotency_key_reused (the key was used for another request)'
            }),
            validate: { headers: idempotencyHeaders, payload: gatewayPayload },
            response: { status: { 201: transactionSchema } },
            async handler(request, h) {

                const { payload } = request;
                const outcome = await move(payStore(request), callerId(request), {
                    idempotencyKey: request.headers['idempotency-key'],
                    providerId: payload.provider_id,
                    asset: payload.asset,
                    amount: payload.amount,
                    metadata: payload.metadata
                });

                return gatewayResponse(request, h, outcome);
            }
        }
    });

    // One by one: hapi types each route's request by its own query, params and payload.
    server.route({
        method: 'GET',
        path: '/status',
        options: {
            auth: false,
            description: 'Readiness of the pay namespace, without triggering a 501',
            tags,
            response: { status: { 200: payStatusSchema } },
            handler: async (request) => payStatus(await dataOf(request).readiness(namespace))
        }
    });

    server.route({
        method: 'GET',
        path: '/wallet',
        options: {
            description: 'The caller\'s wallet and balances',
            notes: [
                'Opened on first use. Balances are integers in the asset\'s minor units, one per asset the wallet has held, ordered by asset:',
                'amount is available to spend, pending_in the deposits not settled yet, pending_out the withdrawals held until they settle.'
            ].join(' '),
            tags,
            ...gated(),
            validate: { query: noQuery },
            response: { status: { 200: walletSchema } },
            handler: (request) => payStore(request).openWallet(callerId(request))
        }
    });

    server.route<{ Query: Page }>({
        method: 'GET',
        path: '/wallet/transactions',
        options: {
            description: 'The caller\'s deposits and withdrawals',
            notes: 'Newest first, ties broken by id (descending). List envelope with X-Total-Count.',
            tags,
            ...gated(),
            validate: { query: transactionsQuery },
            response: { status: { 200: transactionListSchema } },
            handler: async (request, h) => listResponse(h, await payStore(request).listTransactions(callerId(request), request.query))
        }
    });

    server.route<{ Params: { transaction_id: string } }>({
        method: 'GET',
        path: '/wallet/transactions/{transaction_id}',
        options: {
            description: 'One of the caller\'s transactions',
            notes: 'Another caller\'s transaction is a 404, like an unknown one.',
            tags,
            ...gated({ 404: 'transaction_not_found: no transaction of the caller has this id' }),
            validate: { params: transactionParams, query: noQuery },
            response: { status: { 200: transactionSchema } },
            handler: (request) => payStore(request).getTransaction(callerId(request), request.params.transaction_id)
        }
    });

    server.route({
        method: 'GET',
        path: '/tokens',
        options: {
            description: 'Token types and their lifecycle stage',
            notes: 'Ordered by symbol.',
            tags,
            ...gated(),
            validate: { query: noQuery },
            response: { status: { 200: tokenListSchema } },
            handler: async (request, h) => listResponse(h, await payStore(request).listTokens())
        }
    });

    server.route<{ Params: { token_symbol: string } }>({
        method: 'GET',
        path: '/tokens/{token_symbol}',
        options: {
            description: 'One token type',
            notes: 'The symbol is matched in any case (mit finds MIT); the record carries the upper-case symbol.',
            tags,
            ...gated({ 404: 'token_not_found: no token type has this symbol' }),
            validate: { params: tokenParams, query: noQuery },
            response: { status: { 200: tokenSchema } },
            handler: (request) => payStore(request).getToken(request.params.token_symbol)
        }
    });

    server.route({
        method: 'GET',
        path: '/gateway/providers',
        options: {
            description: 'Fiat on/off-ramp processors',
            notes: 'Ordered by id. settlement says how long a deposit and a withdrawal take to settle (2d, 1d; 0s settles at once).',
            tags,
            ...gated(),
            validate: { query: noQuery },
            response: { status: { 200: providerListSchema } },
            handler: async (request, h) => listResponse(h, await payStore(request).listProviders())
        }
    });

    server.route(gatewayRoute('/gateway/deposit', 'Deposit into the caller\'s wallet through a provider', {
        402: 'card_declined: the card provider refused the deposit (an amount ending in 02); nothing moved, and the key replays the refusal',
        409: 'provider_unavailable (the provider is disabled), token_stage_not_allowed (a token not in stage pilot or live), balance_limit_exceeded'
    }, (store, ownerId, request) => store.deposit(ownerId, request)));
    server.route(gatewayRoute('/gateway/withdraw', 'Withdraw from the caller\'s wallet through a provider', {
        409: 'insufficient_funds (the available balance is below the amount), provider_unavailable (the provider is disabled), token_stage_not_allowed (a token not in stage pilot, live or retired)'
    }, (store, ownerId, request) => store.withdraw(ownerId, request)));
}


// A replay is built from the stored outcome the same way as the first response, so both are the same bytes.
function gatewayResponse(request: Parameters<typeof createdResponse>[1], h: Pick<ResponseToolkit, 'response'>, outcome: GatewayOutcome): ResponseObject {

    if ('refusal' in outcome) {
        const boom = toBoom(Boom.boomify(outcome.refusal));
        if (outcome.replayed) {
            boom.output.headers['Idempotent-Replayed'] = 'true';
        }

        throw boom;
    }

    return createdResponse(h, request, outcome.transaction, '/wallet/transactions', outcome.replayed);
}
