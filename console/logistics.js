import { useState } from 'preact/hooks';

import { ErrorNote, html, money, Outcome, Pager, useAction, useApi, useLoad, when } from './ui.js';


const vehiclePage = 10;
const dayMs = 24 * 60 * 60 * 1000;


/** A Date as the value of a datetime-local input, in the reader's time zone. */
function localInput(date) {

    const pad = (n) => String(n).padStart(2, '0');
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}


function startOfDay(time) {

    const date = new Date(time);
    date.setHours(0, 0, 0, 0);
    return date.getTime();
}


function startOfWeek(time) {

    const date = new Date(startOfDay(time));
    date.setDate(date.getDate() - ((date.getDay() + 6) % 7));
    return date.getTime();
}


function vehicleName(vehicle) {

    return vehicle ? `${vehicle.make} ${vehicle.model}` : 'unknown vehicle';
}


/** A vehicle as the booking form lists it, with its year: the live log names vehicles so too. */
export function vehicleLabel(vehicle) {

    return `${vehicleName(vehicle)} (${vehicle.year})`;
}


// A booking's status as it reads: confirmed until its pickup, active from then, completed from its return.
const bookingBadges = { confirmed: 'badge', active: 'badge ok', completed: 'badge', cancelled: 'badge warn' };

function BookingStatus({ status }) {

    return html`<span class=${bookingBadges[status] ?? 'badge'}>${status}</span>`;
}


function Timeline({ bookings, vehicles, anchor, setAnchor }) {

    const [mode, setMode] = useState('week');
    const from = mode === 'week' ? startOfWeek(anchor) : startOfDay(anchor);
    const span = mode === 'week' ? 7 * dayMs : dayMs;
    const to = from + span;
    const visible = bookings.filter((booking) => Date.parse(booking.pickup_at) < to && Date.parse(booking.return_at) > from);
    const rows = [...new Set(visible.map((booking) => booking.vehicle_id))];
    const ticks = mode === 'week' ?
        Array.from({ length: 7 }, (_, i) => new Date(from + i * dayMs).toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short' })) :
        Array.from({ length: 4 }, (_, i) => `${String(i * 6).padStart(2, '0')}:00`);

    return html`<figure class="timeline" aria-labelledby="timeline-caption">
        <figcaption id="timeline-caption">
            <span>${mode === 'week' ? `Week of ${new Date(from).toLocaleDateString('en-GB', { dateStyle: 'medium' })}` : new Date(from).toLocaleDateString('en-GB', { dateStyle: 'full' })}</span>
            <span class="row" role="group" aria-label="Timeline range">
                <button type="button" aria-pressed=${mode === 'day'} onClick=${() => setMode('day')}>Day</button>
                <button type="button" aria-pressed=${mode === 'week'} onClick=${() => setMode('week')}>Week</button>
                <button type="button" onClick=${() => setAnchor(from - span)}>Earlier</button>
                <button type="button" onClick=${() => setAnchor(Date.now())}>Today</button>
                <button type="button" onClick=${() => setAnchor(to)}>Later</button>
            </span>
        </figcaption>
        <div class="ticks" aria-hidden="true">${ticks.map((tick) => html`<span>${tick}</span>`)}</div>
        ${rows.length === 0 ? html`<p class="hint">No bookings in this ${mode}.</p>` : rows.map((vehicleId) => html`<div class="lane">
            <span class="lane-name">${vehicleName(vehicles.get(vehicleId))}</span>
            <div class="track">
                ${visible.filter((booking) => booking.vehicle_id === vehicleId).map((booking) => {

        const start = Math.max(Date.parse(booking.pickup_at), from);
        const end = Math.min(Date.parse(booking.return_at), to);
        const left = ((start - from) / span) * 100;
        const width = Math.max(((end - start) / span) * 100, 1);
        const times = `${when(booking.pickup_at)} → ${when(booking.return_at)}`;
        // The times go under the bar, whole, from its start, or towards its end where it starts late in the range.
        const place = left < 50 ? `left:${left}%` : `right:${100 - left - width}%`;
        return html`<span class="bar" style=${`left:${left}%;width:${width}%`} title=${times}></span><span class="bar-times" style=${place}>${times}</span>`;
    })}
            </div>
        </div>`)}
    </figure>`;
}


const bookingLabels = {
    vehicle_id: 'Vehicle',
    pickup_location_id: 'Pickup at',
    dropoff_location_id: 'Return to',
    pickup_at: 'Pickup time',
    return_at: 'Return time',
    notes: 'Notes'
};


// A refusal that names a vehicle by its id, said with the vehicle's name.
function bookingWords(error, vehicle) {

    if (error.code === 'booking_overlap') {
        return `The ${vehicleName(vehicle)} is already booked then: choose another time or vehicle.`;
    }

    if (error.code === 'vehicle_unavailable') {
        return `The ${vehicleName(vehicle)} is not available for booking: choose another vehicle.`;
    }

    return null;
}


function BookingForm({ persona, vehicles, locations, onBooked }) {

    const api = useApi();
    const [state, run] = useAction();
    const [asked, setAsked] = useState(null);
    const tomorrow = startOfDay(Date.now()) + dayMs + 10 * 60 * 60 * 1000;
    return html`<form class="card" aria-labelledby="book-heading" onSubmit=${(event) => {

        event.preventDefault();
        const values = Object.fromEntries(new FormData(event.currentTarget));
        const body = {
            vehicle_id: values.vehicle_id,
            pickup_location_id: values.pickup_location_id,
            dropoff_location_id: values.dropoff_location_id,
            pickup_at: values.pickup_at ? new Date(values.pickup_at).toISOString() : '',
            return_at: values.return_at ? new Date(values.return_at).toISOString() : '',
            notes: values.notes
        };
        setAsked(vehicles.find((vehicle) => vehicle.id === body.vehicle_id));
        run(() => api('/v1/logistics/bookings', { method: 'POST', body }), (res) => {

            onBooked(res.data);
            return `Booked the ${vehicleName(vehicles.find((vehicle) => vehicle.id === res.data.vehicle_id))} for ${persona.name}: ${when(res.data.pickup_at)} to ${when(res.data.return_at)}.`;
        });
    }}>
        <h3 id="book-heading">Book a vehicle</h3>
        <div class="fields">
            <label>Vehicle
                <select name="vehicle_id" required>
                    ${vehicles.map((vehicle) => html`<option value=${vehicle.id}>${vehicleLabel(vehicle)}${vehicle.is_available ? '' : ', unavailable'}</option>`)}
                </select>
            </label>
            <label>Pickup at
                <select name="pickup_location_id" required>${locations.map((location) => html`<option value=${location.id}>${location.name}</option>`)}</select>
            </label>
            <label>Return to
                <select name="dropoff_location_id" required>${locations.map((location) => html`<option value=${location.id}>${location.name}</option>`)}</select>
            </label>
            <label>Pickup time <input type="datetime-local" name="pickup_at" required defaultValue=${localInput(new Date(tomorrow))} /></label>
            <label>Return time <input type="datetime-local" name="return_at" required defaultValue=${localInput(new Date(tomorrow + 2 * dayMs))} /></label>
        </div>
        <label>Notes <input name="notes" maxlength="1000" /></label>
        <button type="submit" disabled=${state.busy}>Book</button>
        <${Outcome} state=${state} words=${(error) => bookingWords(error, asked)} labels=${bookingLabels} hint=${persona ? null : 'Pick a persona first: bookings need a token.'} />
    </form>`;
}


function Bookings({ persona, vehicles, locations, version }) {

    const api = useApi();
    const [anchor, setAnchor] = useState(null);
    const bookings = useLoad(() => api('/v1/logistics/bookings?limit=100').then((res) => res.data), [persona.token, version]);
    const places = new Map(locations.map((location) => [location.id, location.name]));
    const list = bookings.data?.data ?? [];
    const upcoming = list.map((booking) => Date.parse(booking.pickup_at)).filter((time) => time >= Date.now()).sort((a, b) => a - b);
    const shownAnchor = anchor ?? upcoming[0] ?? Date.now();

    return html`<section aria-labelledby="bookings-heading">
        <h3 id="bookings-heading">Bookings of ${persona.name} <span class="scope">private</span></h3>
        <${ErrorNote} error=${bookings.error} />
        ${bookings.data ? html`
            <${Timeline} bookings=${list} vehicles=${vehicles} anchor=${shownAnchor} setAnchor=${setAnchor} />
            ${list.length ? html`<div class="scroll" tabindex="0" role="region" aria-label="Scrollable table"><table>
                <caption>${bookings.data.total} booking${bookings.data.total === 1 ? '' : 's'} of ${persona.name}</caption>
                <thead><tr><th scope="col">Vehicle</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Route</th><th scope="col">Status</th></tr></thead>
                <tbody>${list.map((booking) => html`<tr key=${booking.id}>
                    <td>${vehicleName(vehicles.get(booking.vehicle_id))}</td>
                    <td>${when(booking.pickup_at)}</td>
                    <td>${when(booking.return_at)}</td>
                    <td>${places.get(booking.pickup_location_id)} → ${places.get(booking.dropoff_location_id)}</td>
                    <td><${BookingStatus} status=${booking.status} /></td>
                </tr>`)}</tbody>
            </table></div>` : html`<p class="hint">${persona.name} has no bookings.</p>`}` : null}
    </section>`;
}


/** Vehicles with their availability, booking as the persona, and the persona's own bookings on a timeline. */
export function Logistics({ persona }) {

    const api = useApi();
    const [availableOnly, setAvailableOnly] = useState(false);
    const [offset, setOffset] = useState(0);
    const [version, setVersion] = useState(0);
    const page = useLoad(() => api(`/v1/logistics/vehicles?limit=${vehiclePage}&offset=${offset}${availableOnly ? '&available=true' : ''}`).then((res) => res.data), [offset, availableOnly]);
    const everything = useLoad(() => Promise.all([
        api('/v1/logistics/vehicles?limit=100').then((res) => res.data.data),
        api('/v1/logistics/locations?limit=100').then((res) => res.data.data)
    ]), []);
    const [vehicles, locations] = everything.data ?? [[], []];
    const byId = new Map(vehicles.map((vehicle) => [vehicle.id, vehicle]));

    return html`<div class="logistics">
        <section aria-labelledby="vehicles-heading">
            <h2 id="vehicles-heading">Vehicles <span class="scope">shared</span></h2>
            <label class="check"><input type="checkbox" checked=${availableOnly} onChange=${(event) => {

    setAvailableOnly(event.target.checked);
    setOffset(0);
}} /> Available only</label>
            <${ErrorNote} error=${page.error ?? everything.error} />
            ${page.data ? html`<div class="scroll" tabindex="0" role="region" aria-label="Scrollable table"><table>
                <caption>Vehicles</caption>
                <thead><tr><th scope="col">Vehicle</th><th scope="col">Year</th><th scope="col">Seats</th><th scope="col">Per day</th><th scope="col">Availability</th></tr></thead>
                <tbody>${page.data.data.map((vehicle) => html`<tr key=${vehicle.id}>
                    <td>${vehicleName(vehicle)}</td><td>${vehicle.year}</td><td>${vehicle.seats}</td><td>${money(vehicle.daily_rate, vehicle.currency)}</td>
                    <td><span class=${vehicle.is_available ? 'badge ok' : 'badge'}>${vehicle.is_available ? 'available' : 'unavailable'}</span></td>
                </tr>`)}</tbody>
            </table></div>
            <${Pager} label="Vehicles" offset=${offset} limit=${vehiclePage} total=${page.data.total} onChange=${setOffset} />` : null}
        </section>
        ${everything.data ? html`<${BookingForm} key=${persona?.name ?? ''} persona=${persona} vehicles=${vehicles} locations=${locations} onBooked=${() => setVersion((n) => n + 1)} />` : null}
        ${persona ? html`<${Bookings} persona=${persona} vehicles=${byId} locations=${locations} version=${version} />` : html`<p class="hint">Pick a persona to see their bookings: they are private.</p>`}
    </div>`;
}
