import { useEffect, useRef, useState } from 'preact/hooks';

import { notMountedHint, shortId } from './instances.js';
import { ErrorNote, html, Outcome, useAction } from './ui.js';


/** The rule sets a demo needs, each applied as it stands: it replaces the data set's rules. */
export const presets = [
    {
        id: 'gateway',
        title: 'Payment gateway down',
        says: 'Deposits and withdrawals answer 503 gateway_unavailable with Retry-After: 30, and nothing is written. Wallets and provider lists still answer.',
        seed: 0,
        rules: [{ method: 'POST', path: '/v1/pay/gateway/*', status: 503, code: 'gateway_unavailable', message: 'The payment gateway is unavailable: try again later.', retry_after: 30 }]
    },
    {
        id: 'slow',
        title: 'Slow network',
        says: 'Every API request waits 300 to 1,200 ms before it runs, drawn from seed 7: the same delays in the same order, run after run.',
        seed: 7,
        rules: [{ path: '/v1/*', latency_ms: [300, 1200] }]
    },
    {
        id: 'lost',
        title: 'Reply lost after the write',
        says: 'The next POST is carried out and committed, then the connection closes with no reply, once. A retry with the same Idempotency-Key is replayed, not done twice.',
        seed: 0,
        rules: [{ method: 'POST', path: '/v1/*', drop: 'after', times: 1 }]
    }
];


/** The faults route of a data set: /_faults for the default one, an instance's own otherwise. */
function faultsPath(id) {

    return id ? `/_instances/${id}/faults` : '/_faults';
}


/** Whether a rule can still act: its times, if it has any, are not used up. */
export function isLive(rule) {

    return rule.times === undefined || rule.hits < rule.times;
}


/**
 * The fault rules of the data set the page uses, read with the admin token: {rules, seed, error, read, reload,
 * heard, apply, clear}; read is true once the rules of this data set have been read. Rules read for another data set
 * are never shown for this one.
 */
export function useFaults(instances) {

    const { selected, ready } = instances;
    const path = faultsPath(selected);
    const [state, setState] = useState({ path: null, seed: 0, rules: [], error: null });
    // Only the newest answer applies: a read that answers late would undo a change made since.
    const round = useRef(0);

    const settle = (data) => {

        ++round.current;
        setState({ path, seed: data.seed, rules: data.rules, error: null });
        return data;
    };

    const reload = async () => {

        const mine = ++round.current;
        try {
            const { data } = await instances.adminCall(path, { housekeeping: true });
            if (mine === round.current) {
                setState({ path, seed: data.seed, rules: data.rules, error: null });
            }
        }
        catch (error) {
            if (mine === round.current) {
                setState({ path, seed: 0, rules: [], error });
            }
        }
    };

    useEffect(() => {

        if (ready) {
            reload();
        }
    }, [path, ready]);

    const current = state.path === path;
    return {
        rules: current ? state.rules : [],
        seed: current ? state.seed : 0,
        error: current ? state.error : null,
        read: current && !state.error,
        // A read of this data set's rules has answered (or failed): the view then reads them again as it opens.
        current,
        reload,
        // A request the live log saw one of these rules act on carries the rule's hits as counted then: a read that
        // answered after the rule acted already counts it, so the larger of the two is right.
        heard: (entry) => setState((previous) => ({ ...previous, rules: previous.rules.map((rule) => (rule.id === entry.fault ? { ...rule, hits: Math.max(rule.hits, entry.fault_hits) } : rule)) })),
        apply: (preset) => instances.adminCall(path, { method: 'PUT', body: { seed: preset.seed, rules: preset.rules } }).then((res) => settle(res.data)),
        clear: () => instances.adminCall(path, { method: 'DELETE' }).then(() => settle({ seed: 0, rules: [] }))
    };
}


/** When a rule acts: after, times and probability in words. */
function whenOf(rule) {

    const parts = [];
    if (rule.after) {
        parts.push(`after the first ${rule.after}`);
    }

    if (rule.times !== undefined) {
        parts.push(rule.times === 1 ? 'once' : `at most ${rule.times} times`);
    }

    if (rule.probability !== undefined) {
        parts.push(`${Math.round(rule.probability * 100)}% of the time`);
    }

    return parts.join(', ') || 'every time';
}


/** The faults view: presets a demo needs, the rules in force with their hits, and a way to clear them. */
export function Faults({ instances, faults }) {

    const [state, run] = useAction();
    const { selected, ready } = instances;
    const where = selected ? `instance ${shortId(selected)}` : 'the default data set';
    // Hits go up as requests come: read them again whenever the view opens, unless it opens on a data set whose rules
    // are being read already (switched to: useFaults reads them).
    useEffect(() => {

        if (faults.current) {
            faults.reload();
        }
    }, []);

    const error = instances.error ?? faults.error;
    const busy = state.busy || !ready;
    return html`<section aria-labelledby="faults-heading">
        <h2 id="faults-heading">Faults</h2>
        <p class="hint">Make ${where} fail on purpose, to show how an app handles it. Rules act on this data set's API (/v1/...) only, never on another data set, the console or /health; applying a preset replaces its rules. The live log marks every request a rule acted on.</p>
        <${ErrorNote} error=${error} hint=${instances.notMounted ? notMountedHint : null} />
        <ul class="presets" aria-label="Presets">
            ${presets.map((preset) => html`<li key=${preset.id} class="card">
                <h3>${preset.title}</h3>
                <p class="meta">${preset.says}</p>
                <button type="button" disabled=${busy} onClick=${() => run(() => faults.apply(preset), () => `Applied "${preset.title}" to ${where}.`)}>Apply<span class="visually-hidden"> ${preset.title}</span></button>
            </li>`)}
        </ul>
        <section aria-labelledby="rules-heading">
            <h3 id="rules-heading">Rules in force on ${where}</h3>
            ${faults.rules.length ? html`<div class="scroll" tabindex="0" role="region" aria-label="Fault rules, scrollable"><table>
                <caption>Tried in order; at most one acts on a request (seed ${faults.seed})</caption>
                <thead><tr><th scope="col">Rule</th><th scope="col">When</th><th scope="col">Hits</th></tr></thead>
                <tbody>${faults.rules.map((rule) => html`<tr key=${rule.id}>
                    <td><code>${rule.description}</code></td>
                    <td>${whenOf(rule)}</td>
                    <td class="amount">${rule.hits}</td>
                </tr>`)}</tbody>
            </table></div>` : faults.read ? html`<p class="hint">No fault rules: ${where} answers normally.</p>` : null}
            <div class="row">
                <button type="button" disabled=${busy} onClick=${() => faults.reload()}>Refresh</button>
                <button type="button" class="danger" disabled=${busy || !faults.rules.length} onClick=${() => run(() => faults.clear(), () => `Cleared the fault rules of ${where}.`)}>Clear faults</button>
            </div>
        </section>
        <div aria-live="polite"><${Outcome} state=${state} /></div>
    </section>`;
}
