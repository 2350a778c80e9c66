import Crypto from 'node:crypto';

import { DomainError, type DomainErrorKind } from '../../errors';
import type { GatewayRequest, PayTransaction, TransactionType } from './store';


// The decisions of the pay namespace: every engine reads the rows, calls these, and writes what they allow.

/** Largest amount of one deposit or withdrawal, in minor units (one billion dollars in cents). */
export const maxAmount = 100_000_000_000;

/** Largest balance of any ledger account, in minor units: the largest integer a JSON client reads exactly. */
export const maxBalance = Number.MAX_SAFE_INTEGER;

/** How long an Idempotency-Key is remembered; older keys are pruned by the next deposit or withdrawal. */
export const idempotencyRetentionMs = 24 * 60 * 60 * 1000;

// Lifecycle stages in which a token may move, per direction.
const allowedStages: Record<TransactionType, string[]> = {
    deposit: ['pilot', 'live'],
    withdrawal: ['pilot', 'live', 'retired']
};

export interface Refusal {
    kind: DomainErrorKind;
    code: string;
    message: string;
    field?: string;
}

/** What an Idempotency-Key keeps of its move, as JSON, so that a replay answers as the first request did. */
export interface StoredOutcome {
    transaction?: PayTransaction;
    refusal?: Refusal;
}

/** What a provider row says about moving money. */
export interface ProviderTerms {
    status: 'active' | 'disabled';
    supports_deposit: boolean;
    supports_withdrawal: boolean;
}

/** The balances a move is decided on: the wallet's and the provider's clearing account in the asset, 0 when never opened. */
export interface Balances {
    wallet: number;
    clearing: number;
}


/** The fingerprint of a gateway request: the same key with another fingerprint is a reuse, not a replay. */
export function requestFingerprint(type: TransactionType, request: GatewayRequest): string {

    return Crypto.createHash('sha256')
        .update(JSON.stringify([type, request.providerId, request.asset, request.amount]))
        .digest('hex');
}


/** Checks a stored key against a new request's fingerprint: a match replays, a mismatch is a 422. */
export function checkReplay(storedFingerprint: string, fingerprint: string): void {

    if (storedFingerprint !== fingerprint) {
        throw new DomainError('unprocessable', 'idempotency_key_reused',
            'This Idempotency-Key was already used for a different request: send a new key for a new deposit or withdrawal');
    }
}


/** Keys created before this instant are forgotten. */
export function idempotencyCutoff(now: Date): string {

    return new Date(now.getTime() - idempotencyRetentionMs).toISOString();
}


/** Why a move may not happen, or null when it may: provider, asset, stage and balances, in that order. */
export function transferRefusal(type: TransactionType, request: GatewayRequest, provider: ProviderTerms | undefined, assetStage: { stage: string | null } | undefined, balances: Balances): Refusal | null {

    const { providerId, asset, amount } = request;
    if (!provider) {
        return refusal('unprocessable', 'provider_not_found', 'provider_id refers to no existing provider', 'provider_id');
    }

    if (provider.status !== 'active') {
        return refusal('conflict', 'provider_unavailable', `Provider ${providerId} is ${provider.status} and moves no money: use an active provider`, 'provider_id');
    }

    if (!(type === 'deposit' ? provider.supports_deposit : provider.supports_withdrawal)) {
        return refusal('unprocessable', 'operation_not_supported', `Provider ${providerId} does not support ${type === 'deposit' ? 'deposits' : 'withdrawals'}`, 'provider_id');
    }

    if (!assetStage) {
        return refusal('unprocessable', 'asset_not_supported', `Provider ${providerId} does not support ${asset}: GET /v1/pay/gateway/providers lists the assets of each provider`, 'asset');
    }

    const stages = allowedStages[type];
    if (assetStage.stage !== null && !stages.includes(assetStage.stage)) {
        const needed = `${stages.slice(0, -1).join(', ')} or ${stages.at(-1)}`;
        return refusal('conflict', 'token_stage_not_allowed', `Token ${asset} is in stage ${assetStage.stage}: a ${type} needs stage ${needed}`, 'asset');
    }

    if (type === 'withdrawal' && balances.wallet < amount) {
        return refusal('conflict', 'insufficient_funds', `Your ${asset} balance is ${balances.wallet}, less than the ${amount} to withdraw`, 'amount');
    }

    if (type === 'deposit' && (balances.wallet + amount > maxBalance || balances.clearing - amount < -maxBalance)) {
        return refusal('conflict', 'balance_limit_exceeded', `This deposit would take a ${asset} balance beyond ${maxBalance} minor units`, 'amount');
    }

    return null;
}


function refusal(kind: DomainErrorKind, code: string, message: string, field: string): Refusal {

    return { kind, code, message, field };
}


/** The answer a stored outcome stands for: the transaction made, or the refusal as the error it was. */
export function fromStored(outcome: StoredOutcome): { transaction: PayTransaction } | { refusal: DomainError } {

    if (outcome.transaction) {
        return { transaction: outcome.transaction };
    }

    const { kind, code, message, field } = outcome.refusal!;
    return { refusal: new DomainError(kind, code, message, field) };
}
