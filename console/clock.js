import { notMountedHint, shortId } from './instances.js';
import { ErrorNote, html, useAction, useLoad, when } from './ui.js';


// The moves a demo needs: a card settles at once, a bank transfer's withdrawal in a day, its deposit in two.
const steps = [
    { advance: '1h', label: '+1 hour' },
    { advance: '1d', label: '+1 day' },
    { advance: '3d', label: '+3 days' }
];


/** What a move of the clock applied, in words: "applied: 2 pay.transaction.completed, 1 logistics.booking.started". */
export function appliedWords(applied) {

    const counts = Object.entries(applied);
    return counts.length ? `applied: ${counts.map(([type, count]) => `${count} ${type}`).join(', ')}` : 'applied: nothing fell due';
}


/**
 * The clock of the data set on screen: where it stands, and buttons that move it forward (PUT /_clock for the default
 * data set, PUT /_instances/<id>/clock for an instance, with the page's admin token), saying what the move applied;
 * instances.moveClock then has the view load again, so that what settled shows.
 */
export function ClockBar({ instances }) {

    const { selected, ready } = instances;
    const [state, run] = useAction();
    // The default data set's clock is read from its route; an instance's is in its record, read again after a move.
    const read = useLoad(() => (ready && !selected ? instances.adminCall('/_clock', { housekeeping: true }).then((res) => res.data.frozen) : Promise.resolve(undefined)), [ready, selected, instances.clockRevision]);
    const instance = instances.list.find((candidate) => candidate.id === selected);
    // undefined until read: the list of instances, or the default data set's clock, has not answered yet.
    const frozen = selected ? instance?.clock : read.data;
    const name = selected ? `instance ${shortId(selected)}` : 'the default data set';
    const move = (step) => run(() => instances.moveClock(step.advance), (applied) => `Moved the clock of ${name} forward ${step.label.slice(1)}: ${appliedWords(applied)}.`);

    return html`<section class="clock" aria-labelledby="clock-heading">
        <h3 id="clock-heading">Clock</h3>
        <span class="now" role="status">${frozen === undefined ? 'Not read yet' : frozen ? html`Frozen at <strong title=${frozen}>${when(frozen)}</strong>` : 'On the wall clock'}</span>
        <span class="row" role="group" aria-label="Move the clock forward">
            ${steps.map((step) => html`<button type="button" disabled=${state.busy || !ready} onClick=${() => move(step)}>${step.label}</button>`)}
        </span>
        <span class="meta">A move applies what falls due on the way (payments settle, bookings start and end; offers read expired by the clock) and leaves the clock frozen there.</span>
        ${state.done ? html`<p class="done" role="status">${state.done}</p>` : null}
        <${ErrorNote} error=${state.error ?? read.error ?? (instances.notMounted ? instances.error : null)} hint=${instances.notMounted ? notMountedHint : null} />
    </section>`;
}
