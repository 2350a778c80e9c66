import { createContext, h } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import htm from 'htm';


export const html = htm.bind(h);

// The client of the data set and persona in use; the app provides it, every view reads it with useApi().
export const ApiContext = createContext(null);


/** An answer of the API that is not a success: its status, code and message as the service sent them (status null: the page refused it before sending). */
export class ApiError extends Error {

    constructor(status, body) {

        super(body.message);
        this.status = status;
        this.code = body.code;
        this.details = body.details ?? [];
    }
}


/**
 * A client of one data set (its base path: '' for the default one, '/i/<id>' for an instance) as one persona (their
 * token, or none): every read and write carries the token, so that the live log names who acted. Resolves to
 * {status, data, headers}; a refusal throws an ApiError.
 */
export function apiClient(basePath, token) {

    return (path, { method = 'GET', body, headers = {}, housekeeping } = {}) => request(basePath + path, { method, token, body, headers, housekeeping });
}


/** The client of the data set and persona the page uses now. */
export function useApi() {

    return useContext(ApiContext);
}


/** Calls one of the console's own endpoints, which no instance prefix applies to. */
export function consoleApi(path, options) {

    return request(path, options ?? {});
}


/** Calls an instance route (/_instances...) with the admin token; no instance prefix applies to those either. */
export function adminApi(path, token, options = {}) {

    return request(path, { ...options, token });
}


// The mark of a read the page makes for itself (lists, rules, names): the live log leaves it out unless asked.
const housekeepingHeaders = { 'x-localgate-console': 'housekeeping' };


async function request(url, { method = 'GET', token, body, headers = {}, housekeeping = false }) {

    const init = { method, headers: { accept: 'application/json', ...(housekeeping ? housekeepingHeaders : {}), ...headers } };
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
        throw new ApiError(0, { code: 'network_error', message: `The service did not answer (${err.message}): is it still running, or did a fault rule drop the reply? The live log shows which.` });
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


/**
 * An API error in words: status, code, message and the fields it names. words(error) may say the message in the
 * page's own terms (names for ids, money for minor units); labels name fields as the form does.
 */
export function ErrorNote({ error, hint, words, labels = {} }) {

    if (!error) {
        return null;
    }

    // Status null: the page itself refused to send it, so there is no answer to quote.
    const said = words?.(error) ?? error.message;
    // A refusal names its field with the message itself; only the fields of a validation say more.
    const details = (error.details ?? []).filter((detail) => detail.message !== error.message);
    return html`<div class="error" role="alert">
        <p>${error.status === null ? said : html`<strong>${error.status || 'No answer'} <code>${error.code ?? 'error'}</code></strong> ${said}`}</p>
        ${details.length ? html`<ul>${details.map((detail) => html`<li>${labels[detail.field] ?? html`<code>${detail.field}</code>`}: ${detail.message}</li>`)}</ul>` : null}
        ${hint ? html`<p class="hint">${hint}</p>` : null}
    </div>`;
}


/** A documented state of the service that is no failure (a namespace not provisioned): said plainly, not in red. */
export function StateNote({ title, children }) {

    return html`<div class="note" role="status">
        <p><strong>${title}</strong></p>
        ${children}
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


/** The decimals of a pay asset: a token's as the API lists it, a currency's from its ISO 4217 minor unit (JPY 0, USD 2). */
export function assetDigits(asset, tokens = []) {

    const token = tokens.find((candidate) => candidate.symbol === asset);
    if (token) {
        return token.decimals;
    }

    try {
        return new Intl.NumberFormat('en', { style: 'currency', currency: asset }).resolvedOptions().maximumFractionDigits;
    }
    catch {
        return 0;
    }
}


/** An amount of integer minor units as money: 2500 EUR is €25.00, 2500 JPY is ¥2,500, 2500 MIT is 25.00 MIT. */
export function minorMoney(minor, asset, tokens = []) {

    const digits = assetDigits(asset, tokens);
    // As a decimal string: Intl formats it exactly, however large the integer.
    const sign = minor < 0 ? '-' : '';
    const whole = String(Math.abs(minor)).padStart(digits + 1, '0');
    const decimal = digits ? `${sign}${whole.slice(0, -digits)}.${whole.slice(-digits)}` : `${sign}${whole}`;
    const fixed = { minimumFractionDigits: digits, maximumFractionDigits: digits };
    if (tokens.some((token) => token.symbol === asset)) {
        return `${new Intl.NumberFormat('en', fixed).format(decimal)} ${asset}`;
    }

    try {
        return new Intl.NumberFormat('en', { style: 'currency', currency: asset, ...fixed }).format(decimal);
    }
    catch {
        return `${new Intl.NumberFormat('en', fixed).format(decimal)} ${asset}`;
    }
}


/** Typed money (25, 25.5, 25.00) in integer minor units (2500), or null when it is no amount or has more decimals than the asset. */
export function toMinor(text, digits) {

    const match = /^(\d+)(?:\.(\d*))?$/.exec(text.trim().replace(/,/g, ''));
    // Zeros past the asset's decimals say nothing: 25.00 yen is 25 yen.
    const fraction = (match?.[2] ?? '').length > digits ? match[2].replace(/0+$/, '') : match?.[2] ?? '';
    if (!match || fraction.length > digits) {
        return null;
    }

    const minor = Number(`${match[1]}${fraction.padEnd(digits, '0')}`);
    return Number.isSafeInteger(minor) ? minor : null;
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
export function Outcome({ state, hint, words, labels }) {

    if (state.error) {
        return html`<${ErrorNote} error=${state.error} hint=${hint} words=${words} labels=${labels} />`;
    }

    return state.done ? html`<p class="done" role="status">${state.done}</p>` : null;
}
