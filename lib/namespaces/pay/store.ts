import type { TimedStore } from '../../transitions';
import type { DomainError } from '../../errors';
import type { ListResult, Page } from '../../lists';
import type { Metadata } from '../../metadata';


export type TransactionType = 'deposit' | 'withdrawal';

/** A move through a provider with a delay is pending until its settles_at, then completed or failed. */
export type TransactionStatus = 'pending' | 'completed' | 'failed';

/** What an asset's money is in a wallet: spendable, coming in (deposits pending), held going out (withdrawals pending). */
export interface WalletBalance {
    asset: string;
    amount: number;
    pending_in: number;
    pending_out: number;
}

export interface Wallet {
    id: string;
    owner_id: string;
    balances: WalletBalance[];
    created_at: string;
}

export interface PayTransaction {
    id: string;
    /** The wallet's owner: the caller who made it. */
    owner_id: string;
    type: TransactionType;
    asset: string;
    amount: number;
    provider_id: string;
    status: TransactionStatus;
    created_at: string;
    /** When it settles (or settled): its created_at for a move that settles at once. */
    settles_at: string;
    /** Its settles_at once it completed or failed; null while pending. */
    settled_at: string | null;
    /** Why it failed (returned); null unless failed. */
    failure_code: string | null;
    /** The client's own pairs given with the move; {} when none were. */
    metadata: Metadata;
}

export interface TokenType {
    symbol: string;
    name: string;
    decimals: number;
    stage: 'planned' | 'pilot' | 'live' | 'retired';
    description: string;
    created_at: string;
}

export interface Provider {
    id: string;
    name: string;
    assets: string[];
    supports_deposit: boolean;
    supports_withdrawal: boolean;
    status: 'active' | 'disabled';
    /** How long its moves take to settle, each direction as a duration (2d, 1d, 0s for at once). */
    settlement: { deposit: string; withdrawal: string };
    created_at: string;
}

export interface GatewayRequest {
    idempotencyKey: string;
    providerId: string;
    asset: string;
    amount: number;
    metadata: Metadata;
}

/** What a deposit or withdrawal came to: a transaction or a refusal, and whether it is the replay of an earlier request. */
export type GatewayOutcome = { replayed: boolean } & ({ transaction: PayTransaction } | { refusal: DomainError });

export interface PayStatus {
    configured: boolean;
    schema_ready: boolean;
    sections: string[];
}

export const sections = ['wallet', 'tokens', 'gateway'];


/** The pay namespace as the routes see it, whatever engine keeps it; its pending moves settle as the timeline applies them. */
export interface PayStore extends TimedStore {

    /** The caller's wallet with a balance per asset it has held, opened on first use. */
    openWallet(ownerId: string): Promise<Wallet>;

    /** The caller's transactions, newest first (ties by id); none when the wallet was never opened. */
    listTransactions(ownerId: string, page: Page): Promise<ListResult<PayTransaction>>;

    /** One of the caller's transactions; anyone else's is not found. */
    getTransaction(ownerId: string, id: string): Promise<PayTransaction>;

    /** The token types, by symbol. */
    listTokens(): Promise<ListResult<TokenType>>;

    /** One token type; the symbol is matched in any case. */
    getToken(symbol: string): Promise<TokenType>;

    /** The fiat on/off-ramp providers, by id. */
    listProviders(): Promise<ListResult<Provider>>;

    /** Moves money from a provider into the caller's wallet, once per Idempotency-Key. */
    deposit(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome>;

    /** Moves money from the caller's wallet out through a provider, once per Idempotency-Key. */
    withdraw(ownerId: string, request: GatewayRequest): Promise<GatewayOutcome>;
}

