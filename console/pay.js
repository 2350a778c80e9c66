import { useState } from 'preact/hooks';

import { notMountedHint, shortId } from './instances.js';
import { ApiError, assetDigits, ErrorNote, html, minorMoney, Outcome, randomKey, StateNote, toMinor, useAction, useApi, useLoad, when } from './ui.js';


const operations = { deposit: 'deposit', withdraw: 'withdrawal' };


function Unprovisioned({ status, instances }) {

    const [state, run] = useAction();
    const made = instances.payInstance;
    const title = status.configured ? 'Not provisioned yet: pay\'s database has no tables' : 'Not set up: this data set has no pay database';
    return html`<${StateNote} title=${title}>
        <p>This is one of pay's documented states, not a failure: its status answers, and its wallet, tokens and gateway answer 501 (not implemented) until pay is provisioned.</p>
        <p class="row">
            <button type="button" disabled=${state.busy || !instances.ready} onClick=${() => run(() => instances.usePay(), () => null)}>${made ? `Use instance ${shortId(made.id)}, with pay` : 'Make an instance with pay and use it'}</button>
            <span class="hint">${made ? 'The instance this button made, still live: the page uses it again.' : 'An instance is a copy of the demo data in memory, with pay provisioned; the default data set stays as it is.'}</span>
        </p>
        ${instances.error ? html`<p class="hint">${notMountedHint}</p>` : null}
        <${Outcome} state=${state} />
        <p>Or provision pay for the default data set: stop localgate and run</p>
        <pre tabindex="0" aria-label="Commands that provision pay">npx localgate provision pay > pay.env\nset -a; . ./pay.env; set +a; npm start</pre>
    <//>`;
}


// A refusal that names a provider by its id or an amount in minor units, said with the provider's name and money.
function transferWords(error, request, provider, balances, tokens) {

    const { asset, amount } = request.body;
    const name = provider?.name ?? request.body.provider_id;
    switch (error.code) {
        case 'insufficient_funds':
            return `Your ${asset} balance is ${minorMoney(balances.find((balance) => balance.asset === asset)?.amount ?? 0, asset, tokens)}, less than the ${minorMoney(amount, asset, tokens)} to withdraw.`;
        case 'balance_limit_exceeded':
            return `This deposit would take your ${asset} balance beyond the most a wallet holds.`;
        case 'provider_unavailable':
            return `${name} is ${provider.status} and moves no money: choose an active provider.`;
        case 'operation_not_supported':
            return `${name} takes no ${operations[request.operation]}s.`;
        case 'asset_not_supported':
            return `${name} does not move ${asset}.`;
        case 'card_declined':
            return `The card was declined: no money moved.`;
        default:
            return null;
    }
}


function Transfer({ providers, balances, tokens, onMoved }) {

    const api = useApi();
    const usable = providers.filter((provider) => provider.status === 'active');
    // The form starts on the local sandbox, where a deposit lands at once in any asset; the providers whose moves take
    // time (a bank transfer) are a choice away.
    const [providerId, setProviderId] = useState((usable.find((provider) => provider.id === 'sandbox') ?? usable[0])?.id ?? providers[0]?.id);
    const provider = providers.find((candidate) => candidate.id === providerId);
    const [asset, setAsset] = useState(provider?.assets[0]);
    const [key, setKey] = useState(() => randomKey('console'));
    const [last, setLast] = useState(null);
    const [state, run] = useAction();
    const shownAsset = provider?.assets.includes(asset) ? asset : provider?.assets[0];
    const digits = assetDigits(shownAsset, tokens);

    const send = (request) => run(() => api(`/v1/pay/gateway/${request.operation}`, {
        method: 'POST',
        headers: { 'idempotency-key': request.key },
        body: request.body
    }), (res) => {

        onMoved();
        const replayed = res.headers.get('idempotent-replayed') === 'true';
        const pending = res.data.status === 'pending' ? `, pending until ${when(res.data.settles_at)}` : '';
        return `${res.status} ${res.data.type} of ${minorMoney(res.data.amount, res.data.asset, tokens)} through ${provider?.name ?? res.data.provider_id}${pending}${replayed ? ': replayed, Idempotent-Replayed: true, no money moved twice' : ''}.`;
    });

    return html`<form class="card" aria-labelledby="transfer-heading" onSubmit=${(event) => {

        event.preventDefault();
        const values = Object.fromEntries(new FormData(event.currentTarget));
        const amount = toMinor(values.amount, digits);
        if (amount === null) {
            run(() => Promise.reject(new ApiError(null, { message: `${values.amount} is no amount of ${shownAsset}: write it like ${minorMoney(2500, shownAsset, tokens)}, with at most ${digits} decimals.` })));
            return;
        }

        const request = { operation: values.operation, key, body: { provider_id: values.provider_id, asset: shownAsset, amount } };
        setLast(request);
        // The next new request gets a new key; the one just used stays with "Send again".
        setKey(randomKey('console'));
        send(request);
    }}>
        <h3 id="transfer-heading">Deposit or withdraw</h3>
        <div class="fields">
            <label>Operation
                <select name="operation"><option value="deposit">deposit</option><option value="withdraw">withdraw</option></select>
            </label>
            <label>Provider
                <select name="provider_id" value=${providerId} onChange=${(event) => setProviderId(event.target.value)}>
                    ${providers.map((candidate) => html`<option value=${candidate.id}>${candidate.name}</option>`)}
                </select>
            </label>
            <label>Asset
                <select name="asset" value=${shownAsset} onChange=${(event) => setAsset(event.target.value)}>${(provider?.assets ?? []).map((code) => html`<option value=${code}>${code}</option>`)}</select>
            </label>
            <label>Amount (${shownAsset}) <input name="amount" required inputmode="decimal" defaultValue="25.00" /></label>
        </div>
        <p class="row">
            <label for="idempotency-key">Idempotency-Key of the next request</label>
            <input id="idempotency-key" value=${key} onInput=${(event) => setKey(event.target.value)} />
            <button type="button" onClick=${() => setKey(randomKey('console'))}>New key</button>
        </p>
        <div class="row">
            <button type="submit" disabled=${state.busy}>Send</button>
            <button type="button" disabled=${!last || state.busy} onClick=${() => send(last)}>Send again (same key)</button>
        </div>
        ${last ? html`<p class="meta">Last sent: ${operations[last.operation]} of ${minorMoney(last.body.amount, last.body.asset, tokens)} with Idempotency-Key <code>${last.key}</code></p>` : null}
        <${Outcome} state=${state} words=${(error) => (last ? transferWords(error, last, providers.find((candidate) => candidate.id === last.body.provider_id), balances, tokens) : null)} labels=${{ provider_id: 'Provider', asset: 'Asset', amount: 'Amount' }} />
    </form>`;
}


// A transaction's status as it reads: a pending one with the instant it settles, a failed one with why.
function TransactionStatus({ transaction }) {

    switch (transaction.status) {
        case 'pending':
            return html`<span class="badge pending">pending</span> <span class="meta">settles ${when(transaction.settles_at)}</span>`;
        case 'failed':
            return html`<span class="badge warn">failed</span> <span class="meta">${transaction.failure_code}</span>`;
        default:
            return html`<span class="badge ok">${transaction.status}</span>`;
    }
}


// A balance: the money available to spend, and beside it what is on its way in and held on its way out.
function Balance({ balance, tokens }) {

    const { asset, amount, pending_in: pendingIn = 0, pending_out: pendingOut = 0 } = balance;
    return html`<li><strong>${minorMoney(amount, asset, tokens)}</strong> <span class="meta">${asset} available</span>
        ${pendingIn ? html` <span class="pending-amount">+${minorMoney(pendingIn, asset, tokens)} pending in</span>` : null}
        ${pendingOut ? html` <span class="pending-amount">${minorMoney(pendingOut, asset, tokens)} pending out</span>` : null}</li>`;
}


function Wallet({ persona }) {

    const api = useApi();
    const [version, setVersion] = useState(0);
    const data = useLoad(() => Promise.all([
        api('/v1/pay/wallet/').then((res) => res.data),
        api('/v1/pay/wallet/transactions?limit=20').then((res) => res.data),
        api('/v1/pay/gateway/providers').then((res) => res.data.data),
        api('/v1/pay/tokens/').then((res) => res.data.data)
    ]), [persona.token, version]);

    if (data.error) {
        return html`<${ErrorNote} error=${data.error} />`;
    }

    if (!data.data) {
        return html`<p class="hint">Loading the wallet…</p>`;
    }

    const [wallet, transactions, providers, tokens] = data.data;
    const providerName = (id) => providers.find((provider) => provider.id === id)?.name ?? id;
    return html`<section aria-labelledby="wallet-heading">
        <h3 id="wallet-heading">Wallet of ${persona.name} <span class="scope">private</span></h3>
        ${wallet.balances.length ? html`<ul class="balances" aria-label="Balances">${wallet.balances.map((balance) => html`<${Balance} key=${balance.asset} balance=${balance} tokens=${tokens} />`)}</ul>` : html`<p class="hint">No balance yet: make a deposit.</p>`}
        <${Transfer} providers=${providers} balances=${wallet.balances} tokens=${tokens} onMoved=${() => setVersion((n) => n + 1)} />
        <div class="scroll" tabindex="0" role="region" aria-label="Scrollable table"><table>
            <caption>Transactions, newest first (${transactions.total})</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Amount</th><th scope="col">Provider</th><th scope="col">Status</th></tr></thead>
            <tbody>${transactions.data.map((transaction) => html`<tr key=${transaction.id}>
                <td>${when(transaction.created_at)}</td><td>${transaction.type}</td><td class="amount">${minorMoney(transaction.amount, transaction.asset, tokens)}</td><td>${providerName(transaction.provider_id)}</td><td><${TransactionStatus} transaction=${transaction} /></td>
            </tr>`)}</tbody>
        </table></div>
    </section>`;
}


/** Pay readiness, and once provisioned the persona's wallet, transfers with their Idempotency-Key, and history. */
export function Pay({ persona, instances }) {

    const api = useApi();
    const status = useLoad(() => api('/v1/pay/status').then((res) => res.data), []);
    const ready = status.data?.schema_ready;
    return html`<section aria-labelledby="pay-heading">
        <h2 id="pay-heading">Pay</h2>
        <${ErrorNote} error=${status.error} />
        ${ready ? html`<p><span class="badge ok">ready</span> Wallet, tokens and gateway answer in this data set.</p>` : null}
        ${status.data && !ready ? html`<${Unprovisioned} status=${status.data} instances=${instances} />` : null}
        ${ready ? (persona ? html`<${Wallet} key=${persona.name} persona=${persona} />` : html`<p class="hint">Pick a persona to see their wallet: it is private.</p>`) : null}
    </section>`;
}
