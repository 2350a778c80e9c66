import Joi from 'joi';

import { requestBody, setByService, timestamp, wording } from '../../fields';
import { listSchema, pageQuery } from '../../lists';
import { metadataSchema } from '../../metadata';
import { maxAmount } from './rules';


export const payStatusSchema = Joi.object({
    configured: Joi.boolean().required(),
    schema_ready: Joi.boolean().required(),
    sections: Joi.array().items(Joi.string().valid('wallet', 'tokens', 'gateway').label('PaySection')).required().label('PaySections')
}).label('PayStatus');


const assetCode = Joi.string().pattern(/^[A-Z]{3,12}$/).description('An ISO 4217 currency code (USD) or a token symbol (MIT), upper case');

const amountMessage = `{{#label}} must be a JSON integer of minor units from 1 to ${maxAmount}`;


export const walletSchema = Joi.object({
    id: Joi.string().required(),
    owner_id: Joi.string().required().description('The caller (the token\'s sub)'),
    balances: Joi.array().items(Joi.object({
        asset: assetCode.required(),
        amount: Joi.number().integer().min(0).required().description('Money available to spend, in the asset\'s minor units (cents for USD)'),
        pending_in: Joi.number().integer().min(0).required().description('Deposits not settled yet: not spendable until they complete'),
        pending_out: Joi.number().integer().min(0).required().description('Withdrawals not settled yet: held, given back if they fail')
    }).label('WalletBalance')).required().description('One entry per asset the wallet has held, by asset').label('WalletBalances'),
    created_at: timestamp.required()
}).label('Wallet');


export const transactionSchema = Joi.object({
    id: Joi.string().guid().required(),
    owner_id: Joi.string().required().description('The wallet\'s owner: the caller who made it (the token\'s sub)'),
    type: Joi.string().valid('deposit', 'withdrawal').required().label('TransactionType'),
    asset: assetCode.required(),
    amount: Joi.number().integer().min(1).max(maxAmount).required().description('Minor units of the asset'),
    provider_id: Joi.string().required(),
    status: Joi.string().valid('pending', 'completed', 'failed').required()
        .description('pending until settles_at through a provider with a delay, then completed or failed; a move through an instant provider is completed at once')
        .label('TransactionStatus'),
    created_at: timestamp.required(),
    settles_at: timestamp.required().description('When it settles: its created_at for a move that settles at once'),
    settled_at: timestamp.allow(null).required().description('When it settled, which is its settles_at; null while pending'),
    failure_code: Joi.string().allow(null).required().description('Why it failed, a stable code (returned: the bank sent the money back); null unless failed'),
    metadata: metadataSchema.required()
}).label('PayTransaction');

export const transactionListSchema = listSchema(transactionSchema, 'PayTransactionList');

export const transactionsQuery = Joi.object(pageQuery);

export const transactionParams = Joi.object({
    transaction_id: Joi.string().guid().required().description('The id of one of the caller\'s transactions')
});


export const tokenSchema = Joi.object({
    symbol: Joi.string().required().description('Upper-case symbol, e.g. MIT'),
    name: Joi.string().required(),
    decimals: Joi.number().integer().min(0).required().description('Minor units per token: amounts are in 10^-decimals tokens'),
    stage: Joi.string().valid('planned', 'pilot', 'live', 'retired').required().description('Lifecycle stage: deposits in pilot or live, withdrawals in pilot, live or retired').label('TokenStage'),
    description: Joi.string().allow('').required(),
    created_at: timestamp.required()
}).label('TokenType');

export const tokenListSchema = listSchema(tokenSchema, 'TokenTypeList');

export const tokenParams = Joi.object({
    token_symbol: Joi.string().pattern(/^[A-Za-z0-9]{1,16}$/).required().description('Token symbol, any case: mit and MIT name the same token')
});


const duration = Joi.string().pattern(/^\d+[smhd]$/).description('A duration: a whole number of seconds, minutes, hours or days (0s, 90m, 1d)');

export const providerSchema = Joi.object({
    id: Joi.string().required(),
    name: Joi.string().required(),
    assets: Joi.array().items(assetCode).required().description('Currencies and token symbols the provider moves').label('ProviderAssets'),
    supports_deposit: Joi.boolean().required(),
    supports_withdrawal: Joi.boolean().required(),
    status: Joi.string().valid('active', 'disabled').required().label('ProviderStatus'),
    settlement: Joi.object({
        deposit: duration.required(),
        withdrawal: duration.required()
    }).required().description('How long a move takes to settle each way; 0s settles at once').label('ProviderSettlement'),
    created_at: timestamp.required()
}).label('Provider');

export const providerListSchema = listSchema(providerSchema, 'ProviderList');


export const noQuery = Joi.object({});


export const gatewayPayload = requestBody({
    provider_id: Joi.string().min(1).max(64).required().description('A provider id from GET /v1/pay/gateway/providers'),
    asset: wording(assetCode.required(), { 'string.pattern.base': '{{#label}} must be an upper-case currency code or token symbol such as USD or MIT' }),
    amount: wording(Joi.number().integer().min(1).max(maxAmount).required(),
        { 'number.base': amountMessage, 'number.integer': amountMessage, 'number.min': amountMessage, 'number.max': amountMessage, 'number.unsafe': amountMessage, 'number.infinity': amountMessage })
        .description(`Minor units of the asset (cents for USD), a JSON integer from 1 to ${maxAmount}`),
    metadata: metadataSchema.default({}),
    id: setByService('generated'),
    owner_id: setByService('the caller\'s identity'),
    wallet_id: setByService('the caller\'s own wallet'),
    created_at: setByService('the time of creation'),
    status: setByService('the outcome of the transfer'),
    settles_at: setByService('the provider\'s settlement terms'),
    settled_at: setByService('the settlement'),
    failure_code: setByService('the settlement'),
    type: setByService('the endpoint: deposit or withdraw')
}, 'GatewayRequest');

export const idempotencyHeaders = Joi.object({
    'idempotency-key': wording(Joi.string().min(1).max(255).pattern(/^[\x20-\x7E]+$/).required(), {
        'any.required': 'Idempotency-Key header is required: send a unique key (1 to 255 characters) per deposit or withdrawal',
        'string.empty': 'Idempotency-Key header must be 1 to 255 characters',
        'string.max': 'Idempotency-Key header must be 1 to 255 characters',
        'string.pattern.base': 'Idempotency-Key header must be printable ASCII'
    })
        .description('A unique key per money movement; a retry with the same key and body replays the first response')
}).unknown();
