import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

import { adminApi, consoleApi, ErrorNote, html, Outcome, useAction, useLoad, when } from './ui.js';


// The subject of the page's admin token: the live log shows the instance routes' calls as made by it.
const adminSubject = 'console';

// The largest page the list route gives; the page reads as many as there are live instances.
const pageSize = 100;

export const notMountedHint = 'The console\'s token endpoint is mounted only when localgate listens on a loopback address, or with CONSOLE_API=on.';


/** An instance's id as the page shows it: the first block of its UUID, enough to tell a handful apart. */
export function shortId(id) {

    return id.split('-')[0];
}


/** The base path of a data set: '' for the default one, '/i/<id>' for an instance. */
export function basePathOf(id) {

    return id ? `/i/${id}` : '';
}


/**
 * The page's instances: the admin token, the live list, which one the page uses (null: the default data set),
 * the snapshots taken in this page, and the actions. A revision that changes whenever the selected data set's
 * state was put back (reset, restore), so that views keyed by it load again.
 */
export function useInstances() {

    const admin = useLoad(() => consoleApi('/console/api/token', { method: 'POST', body: { subject: adminSubject, admin: true } }).then((res) => res.data.token), []);
    const [live, setLive] = useState({ list: [], error: null });
    // /console?instance=<id> opens the page on that instance (a test kit's consoleUrl).
    const [selected, setSelected] = useState(() => new URLSearchParams(location.search).get('instance'));
    const [revision, setRevision] = useState(0);
    // Changes whenever the page moved a clock, so that the default data set's clock is read again.
    const [clockRevision, setClockRevision] = useState(0);
    const [snapshots, setSnapshots] = useState({});
    // The new instance form's choices outlive the view, which leaves the page whenever another view opens.
    const [choices, setChoices] = useState({ seed: 'demo', pay: true, clock: '' });
    // The instance the pay view made: asked again, the page uses it rather than make another.
    const [payInstance, setPayInstance] = useState(null);
    // Only the newest list applies: an older one that answers late would drop an instance made since.
    const round = useRef(0);

    const call = (path, options) => adminApi(path, admin.data, options);
    // An action on an instance that is gone (deleted elsewhere, expired) reads the list again, which says so.
    const callOn = async (id, path, options) => {

        try {
            return await call(`/_instances/${id}${path}`, options);
        }
        catch (error) {
            if (error.code === 'instance_not_found') {
                refresh();
            }

            throw error;
        }
    };

    const refresh = async () => {

        const mine = ++round.current;
        try {
            // By id: an instance made or deleted between two pages shifts the ones after it.
            const found = new Map();
            let offset = 0;
            let total = 0;
            do {
                const { data } = await call(`/_instances?limit=${pageSize}&offset=${offset}`, { housekeeping: true });
                data.data.forEach((instance) => found.set(instance.id, instance));
                offset += data.data.length;
                total = data.total;
                if (!data.data.length) {
                    break;
                }
            } while (offset < total);

            if (mine === round.current) {
                setLive({ list: [...found.values()], error: null });
            }
        }
        catch (error) {
            if (mine === round.current) {
                setLive((previous) => ({ ...previous, error }));
            }
        }
    };

    useEffect(() => {

        if (admin.data) {
            refresh();
        }
    }, [admin.data]);

    const create = async (options) => {

        const { data } = await call('/_instances', { method: 'POST', body: options });
        ++round.current;
        setLive((previous) => ({ list: [...previous.list, data], error: null }));
        setSelected(data.id);
        refresh();
        return data;
    };

    const putBack = () => {

        setRevision((n) => n + 1);
        refresh();
    };

    return {
        ready: Boolean(admin.data),
        error: admin.error ?? live.error,
        // The token endpoint is not there: the console API is off on this server.
        notMounted: admin.error?.status === 404,
        list: live.list,
        selected,
        revision,
        clockRevision,
        snapshots: snapshots[selected] ?? [],
        switchTo: setSelected,
        choices,
        choose: (change) => setChoices((previous) => ({ ...previous, ...change })),
        // The live instance the pay view made, if it is still live.
        payInstance: live.list.find((instance) => instance.id === payInstance) ?? null,
        async usePay() {

            const made = live.list.find((instance) => instance.id === payInstance);
            if (made) {
                setSelected(made.id);
                return made;
            }

            const data = await create({ seed: 'demo', pay: true });
            setPayInstance(data.id);
            return data;
        },
        // Calls an admin route with the page's admin token (the faults view reads and sets rules with it).
        adminCall: call,
        // The token itself, for what a call cannot read: the events view's stream.
        adminToken: admin.data,
        refresh,
        create,
        async reset(id) {

            await callOn(id, '/reset', { method: 'POST' });
            putBack();
        },
        async snapshot(id) {

            const { data } = await callOn(id, '/snapshots', { method: 'POST' });
            const taken = { id: data.snapshot_id, at: new Date().toISOString() };
            setSnapshots((previous) => ({ ...previous, [id]: [...(previous[id] ?? []), taken] }));
            return taken.id;
        },
        async restore(id, snapshotId) {

            await callOn(id, '/restore', { method: 'POST', body: { snapshot_id: snapshotId } });
            putBack();
        },
        // Moves the clock of the data set in use forward (2h, 1d); resolves to what the move applied, counted by type.
        async moveClock(advance) {

            const id = selected;
            const body = { advance };
            const { data } = id ? await callOn(id, '/clock', { method: 'PUT', body }) : await call('/_clock', { method: 'PUT', body });
            const { applied, ...record } = data;
            if (id) {
                setLive((previous) => ({ ...previous, list: previous.list.map((instance) => (instance.id === id ? record : instance)) }));
            }

            setClockRevision((n) => n + 1);
            putBack();
            return applied;
        },
        async remove(id) {

            await callOn(id, '', { method: 'DELETE' });
            setSnapshots(({ [id]: gone, ...others }) => others);
            setSelected(null);
            refresh();
        }
    };
}


/** The data set picker of the header: the default data set and every live instance. */
export function InstancePicker({ instances }) {

    const { list, selected, ready } = instances;
    const gone = selected && !list.some((instance) => instance.id === selected);
    return html`<div class="dataset">
        <label for="dataset-select">Data set</label>
        <select id="dataset-select" value=${selected ?? ''} onChange=${(event) => instances.switchTo(event.target.value || null)}>
            <option value="">Default data set</option>
            ${list.map((instance) => html`<option key=${instance.id} value=${instance.id}>Instance ${shortId(instance.id)}${instance.pay ? ' (pay)' : ''}</option>`)}
            ${gone ? html`<option value=${selected}>Instance ${shortId(selected)} (gone)</option>` : null}
        </select>
        <button type="button" aria-label="Refresh the list of instances" disabled=${!ready} onClick=${instances.refresh}>Refresh</button>
    </div>`;
}


/** A datetime-local field's value (2040-01-01T00:00, seconds optional) as the UTC instant it names. */
function utcInstant(value) {

    return `${value.length === 16 ? `${value}:00` : value}Z`;
}


// What the success line says of a new instance: pay, and where its clock stands.
function madeWords(made) {

    const clock = made.clock ? `, its clock frozen at ${when(made.clock)}` : '';
    return `Made instance ${shortId(made.id)}${made.pay ? ', with pay' : ''}${clock}: the page now uses it.`;
}


function NewInstance({ instances }) {

    const [state, run] = useAction();
    const { seed, pay, clock } = instances.choices;
    return html`<form class="card" aria-labelledby="new-instance-heading" onSubmit=${(event) => {

        event.preventDefault();
        // Left empty, the instance follows the wall clock.
        const options = clock ? { seed, pay, clock: utcInstant(clock) } : { seed, pay };
        run(() => instances.create(options), madeWords);
    }}>
        <h3 id="new-instance-heading">New instance</h3>
        <div class="fields">
            <label>Seed data
                <select name="seed" value=${seed} onChange=${(event) => instances.choose({ seed: event.target.value })}>
                    <option value="demo">the demo data set</option>
                    <option value="none">empty</option>
                </select>
            </label>
            <label class="check"><input type="checkbox" name="pay" checked=${pay} onChange=${(event) => instances.choose({ pay: event.target.checked })} /> Provision pay</label>
            <label>Clock frozen at (UTC)
                <input type="datetime-local" name="clock" step="1" value=${clock} aria-describedby="new-instance-clock-hint" onInput=${(event) => instances.choose({ clock: event.target.value })} />
            </label>
        </div>
        <p id="new-instance-clock-hint" class="hint">With a date, the instance's clock stands still there until a move: what falls due (a transfer settling, a retry) waits for the clock's buttons. Empty, it follows the wall clock.</p>
        <button type="submit" disabled=${state.busy || !instances.ready}>New instance</button>
        <${Outcome} state=${state} labels=${{ clock: 'Clock frozen at' }} />
    </form>`;
}


function LiveInstances({ instances }) {

    const { list, selected } = instances;
    if (!list.length) {
        return html`<p class="hint">No instance is live: make one above, or from a test suite (POST /_instances).</p>`;
    }

    return html`<div class="scroll" tabindex="0" role="region" aria-label="Live instances, scrollable"><table>
        <caption>Live instances, oldest first (${list.length})</caption>
        <thead><tr><th scope="col">Instance</th><th scope="col">Data</th><th scope="col">Pay</th><th scope="col">Clock</th><th scope="col">Made</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Use</span></th></tr></thead>
        <tbody>${list.map((instance) => html`<tr key=${instance.id}>
            <td><code title=${instance.id}>${shortId(instance.id)}</code></td>
            <td>${instance.seed}</td>
            <td>${instance.pay ? 'yes' : 'no'}</td>
            <td>${instance.clock ? html`frozen at <span title=${instance.clock}>${when(instance.clock)}</span>` : 'wall clock'}</td>
            <td>${when(instance.created_at)}</td>
            <td>${when(instance.expires_at)}</td>
            <td><button type="button" aria-pressed=${instance.id === selected} aria-label=${`Use instance ${shortId(instance.id)}`} onClick=${() => instances.switchTo(instance.id)}>Use</button></td>
        </tr>`)}</tbody>
    </table></div>`;
}


function Selected({ instances, onDeleted }) {

    const id = instances.selected;
    const name = `instance ${shortId(id)}`;
    const [state, run, clear] = useAction();
    const [chosen, setChosen] = useState('');
    const [confirming, setConfirming] = useState(false);
    // The question takes the place of the button that asked it: the keyboard's focus goes to its safe answer.
    const keep = useRef(null);
    useLayoutEffect(() => {

        if (confirming) {
            keep.current.focus();
        }
    }, [confirming]);
    const { snapshots } = instances;
    const pick = chosen || snapshots.at(-1)?.id || '';
    const takenAt = (snapshot) => new Date(snapshot.at).toLocaleTimeString('en-GB');
    const busy = state.busy || !instances.ready;
    const restore = (event) => {

        event.preventDefault();
        run(() => instances.restore(id, pick), () => `Restored snapshot ${shortId(pick)} of ${name}: its data, clock and ids are as they were when the snapshot was taken.`);
    };

    const askToDelete = () => {

        clear();
        setConfirming(true);
    };

    const remove = () => {

        setConfirming(false);
        run(() => instances.remove(id), () => onDeleted(`Deleted ${name}: the page uses the default data set again.`));
    };

    // What an action did is said under the restore row, before the delete row: near the button that was clicked.
    return html`<section class="card" aria-labelledby="selected-heading">
        <h3 id="selected-heading">Instance ${shortId(id)}</h3>
        <p class="meta">Base URL for a test suite: <code>${location.origin}${basePathOf(id)}</code></p>
        <div class="row">
            <button type="button" disabled=${busy} onClick=${() => run(() => instances.reset(id), () => `Reset ${name}: its data, clock and ids are as they were when it was made.`)}>Reset</button>
            <button type="button" disabled=${busy} onClick=${() => run(() => instances.snapshot(id), (snapshotId) => `Took snapshot ${shortId(snapshotId)} of ${name}.`)}>Take snapshot</button>
        </div>
        <h4 id="snapshots-heading">Snapshots taken in this page</h4>
        ${snapshots.length ?
        html`<ol class="snapshots" aria-labelledby="snapshots-heading">${snapshots.map((snapshot) => html`<li key=${snapshot.id}><code title=${snapshot.id}>${shortId(snapshot.id)}</code> taken ${takenAt(snapshot)}</li>`)}</ol>` :
        html`<p class="hint">None yet: a snapshot keeps the instance's data, clock and ids, to restore whenever you like.</p>`}
        <form class="row" onSubmit=${restore}>
            <label for="restore-pick">Snapshot to restore</label>
            <select id="restore-pick" value=${pick} disabled=${!snapshots.length} onChange=${(event) => setChosen(event.target.value)}>
                ${snapshots.map((snapshot) => html`<option key=${snapshot.id} value=${snapshot.id}>${shortId(snapshot.id)}, taken ${takenAt(snapshot)}</option>`)}
            </select>
            <button type="submit" disabled=${busy || !snapshots.length}>Restore</button>
        </form>
        <div aria-live="polite"><${Outcome} state=${state} /></div>
        ${confirming ?
        html`<div key="confirm" class="confirm row" role="group" aria-label=${`Delete ${name}?`}>
            <span>Delete ${name} and all its data?</span>
            <button type="button" class="danger" disabled=${busy} onClick=${remove}>Yes, delete it</button>
            <button type="button" ref=${keep} onClick=${() => setConfirming(false)}>Keep it</button>
        </div>` :
        html`<div key="ask" class="row"><button type="button" class="danger" disabled=${busy} onClick=${askToDelete}>Delete instance</button></div>`}
    </section>`;
}


/** The instances view: make one, use one, and reset, snapshot, restore or delete the one in use. */
export function Instances({ instances }) {

    const { selected, list, error } = instances;
    // Said here, since the deleted instance's own card is gone with it.
    const [deleted, setDeleted] = useState(null);
    const gone = selected && instances.ready && !list.some((instance) => instance.id === selected);
    return html`<section aria-labelledby="instances-heading">
        <h2 id="instances-heading">Instances</h2>
        <p class="hint">Each instance is an isolated copy of the API's data, with its own clock and ids, reached at a base URL of its own: made here or by a test suite, kept in memory, gone after an hour unused. Switching the data set shows every view as it stands there; personas stay the same.</p>
        <${ErrorNote} error=${error} hint=${instances.notMounted ? notMountedHint : null} />
        <${NewInstance} instances=${instances} />
        <${LiveInstances} instances=${instances} />
        ${gone ? html`<div class="error" role="alert"><p>Instance ${shortId(selected)} is no longer live: it was deleted or expired.</p>
            <button type="button" onClick=${() => instances.switchTo(null)}>Use the default data set</button></div>` : null}
        ${selected ? html`<${Selected} key=${selected} instances=${instances} onDeleted=${setDeleted} />` : null}
        ${selected ? null : html`${deleted ? html`<p class="done" role="status">${deleted}</p>` : null}<p class="hint">The page uses the default data set, which is not an instance: use or make one to reset it, take and restore snapshots, or delete it.</p>`}
    </section>`;
}
