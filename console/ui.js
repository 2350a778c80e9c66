import { h } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import htm from 'htm';


export const html = htm.bind(h);

// Every call to the API goes through api(): switching to an instance changes this prefix to its base path ('/i/<id>').
let basePath = '';

/** Sets the prefix of every API path the page calls. */
export function setBasePath(path) {

    basePath = path;
}


/** An answer of the API that is not a success: its status, code and message as the service sent them. */
export class ApiError extends Error {

    constructor(status, body) {

        super(body.message);
        this.status = status;
        this.code = body.code;
        this.details = body.details ?? [];
    }
}


/** Calls the API as the given persona (token) and resolves to {status, data, headers}; a refusal throws an ApiError. */
export function api(path, { method = 'GET', token, body, headers = {} } = {}) {

    return request(basePath + path, { method, token, body, headers });
}


/** Calls one of the console's own endpoints, which no instance prefix applies to. */
export function consoleApi(path, options) {

    return request(path, options ?? {});
}


/** Calls an instance route (/_instances...) with the admin token; no instance prefix applies to those either. */
export function adminApi(path, token, options = {}) {

    return request(path, { ...options, token });
}


async function request(url, { method = 'GET', token, body, headers = {} }) {

    const init = { method, headers: { accept: 'application/json', ...headers } };
    if (token) {
        init.headers.authorization = `Bearer ${token}`;
    }

    if (body !== undefined) {
        init.headers['content-type'] = 'application/json';
        init.body = JSON.stringify(body);
    }

    let res;
    try {
        res = await fetch(url, init);
    }
    catch (err) {
        throw new ApiError(0, { code: 'network_error', message: `The service did not answer (${err.message}): is it still running?` });
    }

    const text = await res.text();
    let data = null;
    try {
        data = text ? JSON.parse(text) : null;
    }
    catch {
        data = null;
    }

    if (!res.ok) {
        throw new ApiError(res.status, data && data.message ? data : { code: `http_${res.status}`, message: text || res.statusText });
    }

    return { status: res.status, data, headers: res.headers };
}


/** Loads with the given function whenever a dependency changes; {data, error, loading, reload}. */
export function useLoad(load, deps) {

    const [state, setState] = useState({ loading: true });
    const [round, setRound] = useState(0);
    useEffect(() => {

        let live = true;
        setState((previous) => ({ ...previous, loading: true }));
        load().then(
            (data) => live && setState({ data, loading: false }),
            (error) => live && setState({ error, loading: false })
        );
        return () => {

            live = false;
        };
    }, [...deps, round]);

    return { ...state, reload: () => setRound((n) => n + 1) };
}


/** An API error in words: status, code, message and the fields it names. */
export function ErrorNote({ error, hint }) {

    if (!error) {
        return null;
    }

    return html`<div class="error" role="alert">
        <p><strong>${error.status || 'No answer'} <code>${error.code ?? 'error'}</code></strong> ${error.message}</p>
        ${error.details?.length ? html`<ul>${error.details.map((detail) => html`<li><code>${detail.field}</code>: ${detail.message}</li>`)}</ul>` : null}
        ${hint ? html`<p class="hint">${hint}</p>` : null}
    </div>`;
}


/** The trust signal: how many distinct people reported a record as a scam. */
export function ReportBadge({ count }) {

    return count > 0 ?
        html`<span class="badge warn">${count} scam report${count === 1 ? '' : 's'}</span>` :
        html`<span class="badge ok">no reports</span>`;
}


/** Previous and next page buttons for a list envelope. */
export function Pager({ label, offset, limit, total, onChange }) {

    const last = Math.min(offset + limit, total);
    return html`<div class="pager" role="group" aria-label=${`${label} pages`}>
        <button type="button" disabled=${offset === 0} onClick=${() => onChange(Math.max(0, offset - limit))}>Previous</button>
        <span>${total ? `${offset + 1}–${last} of ${total}` : 'none'}</span>
        <button type="button" disabled=${last >= total} onClick=${() => onChange(offset + limit)}>Next</button>
    </div>`;
}


/** A price in its currency, as the currency writes it. */
export function money(amount, currency) {

    try {
        return new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 3 }).format(amount);
    }
    catch {
        return `${amount} ${currency}`;
    }
}


/** A timestamp in the reader's time zone, to the minute. */
export function when(iso) {

    return new Date(iso).toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short' });
}


/** A fresh random key, also outside a secure context (where crypto.randomUUID is missing). */
export function randomKey(prefix) {

    const bytes = crypto.getRandomValues(new Uint8Array(8));
    return `${prefix}-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}


/** A form whose submit runs an API call, showing what came back: the error as message and code, or a success line. */
export function useAction() {

    const [state, setState] = useState({ busy: false });
    const run = async (call, success) => {

        setState({ busy: true });
        try {
            const result = await call();
            setState({ busy: false, done: success(result) });
            return result;
        }
        catch (error) {
            setState({ busy: false, error });
            return null;
        }
    };

    return [state, run, () => setState({ busy: false })];
}


/** The outcome of an action: the error, or the success line. */
export function Outcome({ state, hint }) {

    if (state.error) {
        return html`<${ErrorNote} error=${state.error} hint=${hint} />`;
    }

    return state.done ? html`<p class="done" role="status">${state.done}</p>` : null;
}
