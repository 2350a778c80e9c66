import { useState } from 'preact/hooks';

import { api, ErrorNote, html, Outcome, randomKey, useAction, useLoad, when } from './ui.js';


function Readiness({ status }) {

    return html`<div class="card">
        <h3>Readiness</h3>
        <p>
            <span class=${status.configured ? 'badge ok' : 'badge warn'}>configured: ${String(status.configured)}</span>
            <span class=${status.schema_ready ? 'badge ok' : 'badge warn'}>schema_ready: ${String(status.schema_ready)}</span>
            <span class="meta">sections: ${status.sections.join(', ')}</span>
        </p>
        ${status.schema_ready ? null : html`<p>Pay's data endpoints answer 501 until it is provisioned. To provision it, stop localgate and run:</p>
            <pre tabindex="0" aria-label="Commands that provision pay">npx localgate provision pay > pay.env\nset -a; . ./pay.env; set +a; npm start</pre>`}
    </div>`;
}


function Transfer({ persona, providers, onMoved }) {

    const usable = providers.filter((provider) => provider.status === 'active');
    const [providerId, setProviderId] = useState(usable[0]?.id ?? providers[0]?.id);
    const [key, setKey] = useState(() => randomKey('console'));
    const [last, setLast] = useState(null);
    const [state, run] = useAction();
    const provider = providers.find((candidate) => candidate.id === providerId);

    const send = (request) => run(() => api(`/v1/pay/gateway/${request.operation}`, {
        method: 'POST',
        token: persona.token,
        headers: { 'idempotency-key': request.key },
        body: request.body
    }), (res) => {

        onMoved();
        const replayed = res.headers.get('idempotent-replayed') === 'true';
        return `${res.status} ${res.data.type} of ${res.data.amount} ${res.data.asset} (transaction ${res.data.id})${replayed ? ': replayed, Idempotent-Replayed: true, no money moved twice' : ''}.`;
    });

    return html`<form class="card" aria-labelledby="transfer-heading" onSubmit=${(event) => {

        event.preventDefault();
        const values = Object.fromEntries(new FormData(event.currentTarget));
        const request = { operation: values.operation, key, body: { provider_id: values.provider_id, asset: values.asset, amount: Number(values.amount) } };
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
                <select name="asset">${(provider?.assets ?? []).map((asset) => html`<option value=${asset}>${asset}</option>`)}</select>
            </label>
            <label>Amount (minor units) <input name="amount" required inputmode="numeric" defaultValue="2500" /></label>
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
        ${last ? html`<p class="meta">Last sent: ${last.operation} of ${last.body.amount} ${last.body.asset} with Idempotency-Key <code>${last.key}</code></p>` : null}
        <${Outcome} state=${state} />
    </form>`;
}


function Wallet({ persona }) {

    const [version, setVersion] = useState(0);
    const data = useLoad(() => Promise.all([
        api('/v1/pay/wallet/', { token: persona.token }).then((res) => res.data),
        api('/v1/pay/wallet/transactions?limit=20', { token: persona.token }).then((res) => res.data),
        api('/v1/pay/gateway/providers', { token: persona.token }).then((res) => res.data.data)
    ]), [persona.token, version]);

    if (data.error) {
        return html`<${ErrorNote} error=${data.error} />`;
    }

    if (!data.data) {
        return html`<p class="hint">Loading the wallet…</p>`;
    }

    const [wallet, transactions, providers] = data.data;
    return html`<section aria-labelledby="wallet-heading">
        <h3 id="wallet-heading">Wallet of ${persona.name} <span class="scope">private</span></h3>
        ${wallet.balances.length ? html`<ul class="balances" aria-label="Balances">${wallet.balances.map((balance) => html`<li><strong>${balance.amount}</strong> ${balance.asset}</li>`)}</ul>` : html`<p class="hint">No balance yet: make a deposit.</p>`}
        <${Transfer} persona=${persona} providers=${providers} onMoved=${() => setVersion((n) => n + 1)} />
        <div class="scroll" tabindex="0" role="region" aria-label="Scrollable table"><table>
            <caption>Transactions, newest first (${transactions.total})</caption>
            <thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Amount</th><th scope="col">Provider</th><th scope="col">Status</th></tr></thead>
            <tbody>${transactions.data.map((transaction) => html`<tr key=${transaction.id}>
                <td>${when(transaction.created_at)}</td><td>${transaction.type}</td><td>${transaction.amount} ${transaction.asset}</td><td>${transaction.provider_id}</td><td>${transaction.status}</td>
            </tr>`)}</tbody>
        </table></div>
    </section>`;
}


/** Pay readiness, and once provisioned the persona's wallet, transfers with their Idempotency-Key, and history. */
export function Pay({ persona }) {

    const status = useLoad(() => api('/v1/pay/status').then((res) => res.data), []);
    return html`<section aria-labelledby="pay-heading">
        <h2 id="pay-heading">Pay</h2>
        <${ErrorNote} error=${status.error} />
        ${status.data ? html`<${Readiness} status=${status.data} />` : null}
        ${status.data?.schema_ready ? (persona ? html`<${Wallet} key=${persona.name} persona=${persona} />` : html`<p class="hint">Pick a persona to see their wallet: it is private.</p>`) : null}
    </section>`;
}
