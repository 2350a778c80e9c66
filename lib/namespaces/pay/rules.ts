import Crypto from 'node:crypto';

import { latestInstant } from '../../record-context';
import { DomainError, type DomainErrorKind } from '../../errors';
import { metadataPairs, readMetadata } from '../../metadata';
import type { GatewayRequest, PayTransaction, TransactionStatus, TransactionType } from './store';


// The decisions of the pay namespace: every engine reads the rows, calls these, and writes what they allow.

/** Largest amount of one deposit or withdrawal, in minor units (one billion dollars in cents). */
export const maxAmount = 100_000_000_000;

/** Largest balance of any ledger account, in minor units: the largest integer a JSON client reads exactly. */
export const maxBalance = Number.MAX_SAFE_INTEGER;

/** How long an Idempotency-Key is remembered after its move settled; older keys are pruned by the next deposit or withdrawal. */
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
    field: string;
}

/** A transaction as a key kept it: one kept before transactions carried their owner and metadata has neither. */
export type StoredTransaction = Omit<PayTransaction, 'owner_id' | 'metadata'> & Partial<Pick<PayTransaction, 'owner_id' | 'metadata'>>;

/** What an Idempotency-Key keeps of its move, as JSON, so that a replay answers as the first request did. */
export type StoredOutcome = { transaction: StoredTransaction; refusal?: undefined } | { transaction?: undefined; refusal: Refusal };

/** A transaction as a store's query reads it: its metadata as the JSON text the row holds. */
export type TransactionRow = Omit<PayTransaction, 'metadata'> & { metadata: string };

/**
 * How a provider's moves fail: `returned`, a move whose amount in minor units ends in 99 settles failed; `declined`, a
 * deposit whose amount ends in 02 is refused at once.
 */
export type FailureMode = 'none' | 'returned' | 'declined';

/** What a provider row says about moving money. */
export interface ProviderTerms {
    status: 'active' | 'disabled';
    supports_deposit: boolean;
    supports_withdrawal: boolean;
    /** Seconds a deposit and a withdrawal take to settle; 0 settles at once. */
    deposit_settlement_s: number;
    withdrawal_settlement_s: number;
    failure_mode: FailureMode;
}

/**
 * The balances a move is decided on, 0 for an account never opened: the wallet's spendable amount in the asset, what
 * its pending deposits bring in, and the provider's clearing account.
 */
export interface Balances {
    wallet: number;
    incoming: number;
    // Held for pending withdrawals: it comes back to the wallet if one fails, so a deposit's limit counts it.
    outgoing: number;
    clearing: number;
}

/** A wallet account of an asset: spendable, deposits pending, withdrawals held until they settle. */
export type AccountKind = 'available' | 'pending_in' | 'pending_out';

/** One line of a posting: the account it moves (a wallet account, or the provider's clearing account) and by how much. */
export interface Leg {
    account: AccountKind | 'clearing';
    amount: number;
}

/** How a pending move ends as it falls due. */
export interface Settlement {
    status: Exclude<TransactionStatus, 'pending'>;
    failure_code: string | null;
}


/**
 * The fingerprint of a gateway request: the same key with another fingerprint is a reuse, not a replay. Metadata counts
 * by its pairs, whatever their order; a request without any has the fingerprint it had before metadata existed, so a
 * key kept then still replays.
 */
export function requestFingerprint(type: TransactionType, request: GatewayRequest): string {

    const pairs = metadataPairs(request.metadata);
    const fields = [type, request.providerId, request.asset, request.amount];
    return Crypto.createHash('sha256')
        .update(JSON.stringify(pairs.length ? [...fields, pairs] : fields))
        .digest('hex');
}


/** Checks a stored key against a new request's fingerprint: a match replays, a mismatch is a 422. */
export function checkReplay(storedFingerprint: string, fingerprint: string): void {

    if (storedFingerprint !== fingerprint) {
        throw new DomainError('unprocessable', 'idempotency_key_reused',
            'This Idempotency-Key was already used for a different request: send a new key for a new deposit or withdrawal');
    }
}


/** Until when a key is kept: 24 hours after its move, or after the move settles when that is later. */
export function keepUntil(now: Date, due?: string): string {

    const from = Math.max(now.getTime(), due ? Date.parse(due) : 0);
    return new Date(Math.min(from + idempotencyRetentionMs, latestInstant)).toISOString();
}


/** Seconds a move of this type through a provider takes to settle; 0 settles at once. */
export function settlementSeconds(terms: Pick<ProviderTerms, 'deposit_settlement_s' | 'withdrawal_settlement_s'>, type: TransactionType): number {

    return type === 'deposit' ? terms.deposit_settlement_s : terms.withdrawal_settlement_s;
}


/** The transaction of the owner's wallet a move allowed on these terms makes at `createdAt`: pending until it settles, unless it settles at once. */
export function madeTransaction(id: string, ownerId: string, type: TransactionType, request: GatewayRequest, terms: ProviderTerms, createdAt: string): PayTransaction {

    const seconds = settlementSeconds(terms, type);
    const pending = seconds > 0;
    return payTransaction({
        id,
        type,
        asset: request.asset,
        amount: request.amount,
        provider_id: request.providerId,
        status: pending ? 'pending' : 'completed',
        created_at: createdAt,
        settles_at: settlesAt(createdAt, seconds),
        settled_at: pending ? null : createdAt,
        failure_code: null,
        metadata: request.metadata
    }, ownerId);
}


/**
 * A transaction of the owner's wallet with its fields in the one order every answer and event holds them (a key kept
 * before metadata existed holds none: {}).
 */
export function payTransaction(transaction: StoredTransaction, ownerId: string): PayTransaction {

    const { id, type, asset, amount, provider_id: providerId, status, created_at: createdAt, settles_at: due, settled_at: settled, failure_code: code } = transaction;
    return {
        id,
        owner_id: ownerId,
        type,
        asset,
        amount,
        provider_id: providerId,
        status,
        created_at: createdAt,
        settles_at: due,
        settled_at: settled,
        failure_code: code,
        metadata: transaction.metadata ?? {}
    };
}


/** A transaction as its owner reads it, from the row a store's query read. */
export function transactionRecord(row: TransactionRow): PayTransaction {

    return payTransaction({ ...row, metadata: readMetadata(row.metadata) }, row.owner_id);
}


/** When a move made at `createdAt` settles: `seconds` later, or at the last instant a record holds, if that comes first. */
export function settlesAt(createdAt: string, seconds: number): string {

    return new Date(Math.min(Date.parse(createdAt) + seconds * 1000, latestInstant)).toISOString();
}


/** How a pending move settles as it falls due: a provider that returns them fails the amounts ending in 99. */
export function settlementOf(failureMode: FailureMode, amount: number): Settlement {

    return failureMode === 'returned' && amount % 100 === 99 ? { status: 'failed', failure_code: 'returned' } : { status: 'completed', failure_code: null };
}


/**
 * The legs a move posts as it is made. At once: the wallet's available account and the clearing account. Pending: a
 * deposit moves clearing into pending_in (not spendable yet); a withdrawal moves available into pending_out (held).
 */
export function creationLegs(type: TransactionType, pending: boolean, amount: number): Leg[] {

    if (!pending) {
        const signed = type === 'deposit' ? amount : -amount;
        return [{ account: 'available', amount: signed }, { account: 'clearing', amount: -signed }];
    }

    return type === 'deposit' ?
        [{ account: 'clearing', amount: -amount }, { account: 'pending_in', amount }] :
        [{ account: 'available', amount: -amount }, { account: 'pending_out', amount }];
}


/**
 * The legs a pending move posts as it settles: a deposit's pending_in goes to available (completed) or back to
 * clearing (failed); a withdrawal's pending_out goes to clearing (completed) or back to available (failed).
 */
export function settlementLegs(type: TransactionType, status: Settlement['status'], amount: number): Leg[] {

    const from: AccountKind = type === 'deposit' ? 'pending_in' : 'pending_out';
    const completedTo: Leg['account'] = type === 'deposit' ? 'available' : 'clearing';
    const failedTo: Leg['account'] = type === 'deposit' ? 'clearing' : 'available';
    return [{ account: from, amount: -amount }, { account: status === 'completed' ? completedTo : failedTo, amount }];
}


/**
 * Why a move may not happen (provider, asset, stage, balances and the provider's own refusal, in that order), or the
 * terms of the provider it moves through when it may.
 */
export function transferDecision<Terms extends ProviderTerms>(type: TransactionType, request: GatewayRequest, provider: Terms | undefined, assetStage: { stage: string | null } | undefined, balances: Balances): { refusal: Refusal } | { terms: Terms } {

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

    if (type === 'deposit' && (balances.wallet + balances.incoming + balances.outgoing + amount > maxBalance || balances.clearing - amount < -maxBalance)) {
        return refusal('conflict', 'balance_limit_exceeded', `This deposit would take a ${asset} balance beyond ${maxBalance} minor units`, 'amount');
    }

    if (type === 'deposit' && provider.failure_mode === 'declined' && amount % 100 === 2) {
        return refusal('payment_required', 'card_declined', `Provider ${providerId} declined this deposit: the card was refused, nothing moved`, 'amount');
    }

    return { terms: provider };
}


function refusal(kind: DomainErrorKind, code: string, message: string, field: string): { refusal: Refusal } {

    return { refusal: { kind, code, message, field } };
}


/** The answer a key's stored outcome stands for: the owner's transaction made, or the refusal as the error it was. */
export function fromStored(outcome: StoredOutcome, ownerId: string): { transaction: PayTransaction } | { refusal: DomainError } {

    if (outcome.transaction) {
        return { transaction: payTransaction(outcome.transaction, ownerId) };
    }

    const { kind, code, message, field } = outcome.refusal;
    return { refusal: new DomainError(kind, code, message, field) };
}


/** The answer a kept key replays: the outcome its row holds as JSON (written from a StoredOutcome), as fromStored reads it. */
export function fromKept(outcome: string, ownerId: string): { transaction: PayTransaction } | { refusal: DomainError } {

    return fromStored(JSON.parse(outcome) as StoredOutcome, ownerId);
}
