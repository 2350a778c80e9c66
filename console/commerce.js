import { useState } from 'preact/hooks';

import { ErrorNote, html, money, Outcome, Pager, ReportBadge, useAction, useApi, useLoad, when } from './ui.js';


const businessPage = 5;
const productPage = 10;

// The largest page a list gives: the view reads every business in pages of this size, to order them itself.
const readPage = 100;

const orders = {
    reported: { label: 'most reported first', compare: (a, b) => b.scam_report_count - a.scam_report_count },
    oldest: { label: 'oldest first', compare: () => 0 }
};


function formValues(event) {

    event.preventDefault();
    return Object.fromEntries(new FormData(event.currentTarget));
}


// The list route orders businesses by age only; the trust signal leads here, so the view reads them all and orders them.
async function allBusinesses(api) {

    const all = [];
    let total = 0;
    do {
        const { data } = await api(`/v1/commerce/businesses?limit=${readPage}&offset=${all.length}`);
        all.push(...data.data);
        total = data.total;
        if (!data.data.length) {
            break;
        }
    } while (all.length < total);

    return all;
}


function ReportForm({ persona, targetType, targetId, name, onReported }) {

    const api = useApi();
    const [state, run] = useAction();
    const id = `report-${targetId}`;
    return html`<form class="inline" onSubmit=${(event) => {

        const { reason } = formValues(event);
        run(() => api('/v1/commerce/scam-reports', { method: 'POST', body: { target_type: targetType, target_id: targetId, reason } }), (res) => {

            onReported(res.data);
            return `Reported ${name} as ${persona.name}.`;
        });
    }}>
        <label for=${id}>Why is ${name} a scam?</label>
        <textarea id=${id} name="reason" required maxlength="2000" rows="2"></textarea>
        <button type="submit" disabled=${state.busy}>Send the report</button>
        <${Outcome} state=${state} hint=${persona ? null : 'Pick a persona first: reports need a token.'} />
    </form>`;
}


function InquiryForm({ persona, product, onSent }) {

    const api = useApi();
    const [state, run] = useAction();
    const id = `inquiry-${product.id}`;
    return html`<form class="inline" onSubmit=${(event) => {

        const { message } = formValues(event);
        run(() => api('/v1/commerce/inquiries', { method: 'POST', body: { product_id: product.id, message } }), (res) => {

            onSent(res.data);
            return `Sent your question about ${product.name} as ${persona.name}.`;
        });
    }}>
        <label for=${id}>Your question about ${product.name}</label>
        <textarea id=${id} name="message" required maxlength="2000" rows="2"></textarea>
        <button type="submit" disabled=${state.busy}>Send the inquiry</button>
        <${Outcome} state=${state} hint=${persona ? null : 'Pick a persona first: inquiries need a token.'} />
    </form>`;
}


function Offers({ product }) {

    const api = useApi();
    const offers = useLoad(() => api(`/v1/commerce/offers?product_id=${encodeURIComponent(product.id)}&limit=100`).then((res) => res.data), [product.id]);
    if (offers.error) {
        return html`<${ErrorNote} error=${offers.error} />`;
    }

    if (!offers.data) {
        return html`<p class="hint">Loading offers…</p>`;
    }

    return offers.data.total ?
        html`<ul class="offers" aria-label=${`Offers for ${product.name}`}>${offers.data.data.map((offer) => html`<li>
            <strong>${offer.title}</strong> ${money(offer.price, offer.currency)} · ${when(offer.valid_from)} to ${when(offer.valid_until)} <${ReportBadge} count=${offer.scam_report_count} />
        </li>`)}</ul>` :
        html`<p class="hint">No offers for ${product.name}.</p>`;
}


function Product({ persona, product, onChanged, onCreated }) {

    const [open, setOpen] = useState(null);
    const toggle = (what) => setOpen(open === what ? null : what);
    return html`<li class=${product.scam_report_count ? 'item flagged' : 'item'}>
        <div class="line">
            <strong>${product.name}</strong>
            <span>${money(product.price, product.currency)}</span>
            <${ReportBadge} count=${product.scam_report_count} />
        </div>
        ${product.description ? html`<p>${product.description}</p>` : null}
        <div class="row">
            <button type="button" aria-expanded=${open === 'offers'} onClick=${() => toggle('offers')}>Offers</button>
            <button type="button" aria-expanded=${open === 'report'} onClick=${() => toggle('report')}>Report as scam</button>
            <button type="button" aria-expanded=${open === 'inquiry'} onClick=${() => toggle('inquiry')}>Ask a question</button>
        </div>
        ${open === 'offers' ? html`<${Offers} product=${product} />` : null}
        ${open === 'report' ? html`<${ReportForm} persona=${persona} targetType="product" targetId=${product.id} name=${product.name} onReported=${(report) => {

        onCreated('scam report', report);
        onChanged();
    }} />` : null}
        ${open === 'inquiry' ? html`<${InquiryForm} persona=${persona} product=${product} onSent=${(inquiry) => onCreated('inquiry', inquiry)} />` : null}
    </li>`;
}


const productLabels = { name: 'Name', price: 'Price', currency: 'Currency', description: 'Description' };


function AddProduct({ persona, business, onAdded }) {

    const api = useApi();
    const [state, run] = useAction();
    return html`<form class="card" aria-labelledby="add-product-heading" onSubmit=${(event) => {

        const form = event.currentTarget;
        const values = formValues(event);
        run(() => api('/v1/commerce/products', {
            method: 'POST',
            body: { name: values.name, price: Number(values.price), currency: values.currency.trim().toUpperCase(), business_id: business.id, description: values.description }
        }), (res) => {

            form.reset();
            onAdded();
            return `Added ${res.data.name} as ${persona.name}.`;
        });
    }}>
        <h4 id="add-product-heading">Add a product to ${business.name}</h4>
        <div class="fields">
            <label>Name <input name="name" required maxlength="200" /></label>
            <label>Price <input name="price" required inputmode="decimal" /></label>
            <label>Currency <input name="currency" required defaultValue="USD" maxlength="3" size="4" /></label>
        </div>
        <label>Description <textarea name="description" rows="2" maxlength="5000"></textarea></label>
        <button type="submit" disabled=${state.busy}>Add the product</button>
        <${Outcome} state=${state} labels=${productLabels} hint=${persona ? null : 'Pick a persona first: adding a product needs a token.'} />
    </form>`;
}


function BusinessDetail({ persona, businessId, version, onChanged, onCreated }) {

    const api = useApi();
    const [offset, setOffset] = useState(0);
    const business = useLoad(() => api(`/v1/commerce/businesses/${encodeURIComponent(businessId)}`).then((res) => res.data), [businessId, version]);
    const products = useLoad(() => api(`/v1/commerce/products?business_id=${encodeURIComponent(businessId)}&limit=${productPage}&offset=${offset}`).then((res) => res.data), [businessId, offset, version]);
    const [reporting, setReporting] = useState(false);
    if (business.error) {
        return html`<${ErrorNote} error=${business.error} />`;
    }

    if (!business.data) {
        return html`<p class="hint">Loading…</p>`;
    }

    const shop = business.data;
    return html`<section class="detail-pane" aria-labelledby="business-heading">
        <h3 id="business-heading">${shop.name} <${ReportBadge} count=${shop.scam_report_count} /></h3>
        <p>${shop.description}</p>
        <p class="meta">${shop.category} · ${shop.city} · ${shop.phone}</p>
        <button type="button" aria-expanded=${reporting} onClick=${() => setReporting(!reporting)}>Report this business</button>
        ${reporting ? html`<${ReportForm} persona=${persona} targetType="business" targetId=${shop.id} name=${shop.name} onReported=${(report) => {

        onCreated('scam report', report);
        onChanged();
    }} />` : null}
        <h4>Products</h4>
        <${ErrorNote} error=${products.error} />
        ${products.data ? html`
            <ul class="items" aria-label=${`Products of ${shop.name}`}>
                ${products.data.data.map((product) => html`<${Product} key=${product.id} persona=${persona} product=${product} onChanged=${onChanged} onCreated=${onCreated} />`)}
            </ul>
            <${Pager} label="Products" offset=${offset} limit=${productPage} total=${products.data.total} onChange=${setOffset} />` : null}
        <${AddProduct} persona=${persona} business=${shop} onAdded=${onChanged} />
    </section>`;
}


function Mine({ persona, created }) {

    const api = useApi();
    const records = useLoad(() => Promise.all(created.map((entry) => {

        const path = entry.kind === 'inquiry' ? 'inquiries' : 'scam-reports';
        return api(`/v1/commerce/${path}/${entry.id}`).then((res) => ({ ...entry, record: res.data }), (error) => ({ ...entry, error }));
    })), [persona.token, created.length]);

    return html`<section class="card" aria-labelledby="mine-heading">
        <h3 id="mine-heading">Private to ${persona.name}: inquiries and reports</h3>
        ${created.length === 0 ? html`<p class="hint">${persona.name} has sent none from this page yet. Each is read back from the API with ${persona.name}'s token: nobody else can read it.</p>` : null}
        <ul class="items">${(records.data ?? []).map((entry) => html`<li key=${entry.id}>
            ${entry.error ? html`<${ErrorNote} error=${entry.error} />` : html`<span class="badge">${entry.kind}</span> ${entry.record.message ?? entry.record.reason} <span class="meta">${entry.record.target_type ?? ''} ${when(entry.record.created_at)}</span>`}
        </li>`)}</ul>
    </section>`;
}


/** Businesses, their products and offers with the trust signal; reports, inquiries and new products as the persona. */
export function Commerce({ persona }) {

    const api = useApi();
    const [offset, setOffset] = useState(0);
    const [order, setOrder] = useState('reported');
    const [selected, setSelected] = useState(null);
    const [version, setVersion] = useState(0);
    const [created, setCreated] = useState({});
    const businesses = useLoad(() => allBusinesses(api), [version]);
    // A stable sort: equal counts keep the API's order, oldest first.
    const ordered = businesses.data ? [...businesses.data].sort(orders[order].compare) : [];
    const shown = ordered.slice(offset, offset + businessPage);
    const onChanged = () => setVersion((n) => n + 1);
    const onCreated = (kind, record) => setCreated((all) => ({ ...all, [persona.name]: [...(all[persona.name] ?? []), { kind, id: record.id }] }));

    const reorder = (event) => {

        setOrder(event.target.value);
        setOffset(0);
    };

    return html`<div class="commerce">
        <section aria-labelledby="businesses-heading">
            <h2 id="businesses-heading">Businesses <span class="scope">shared</span></h2>
            <label class="order">Order
                <select value=${order} onChange=${reorder}>${Object.entries(orders).map(([id, { label }]) => html`<option value=${id}>${label}</option>`)}</select>
            </label>
            <${ErrorNote} error=${businesses.error} />
            ${businesses.data ? html`
                <ul class="items" aria-label="Businesses">
                    ${shown.map((business) => html`<li key=${business.id} class=${business.scam_report_count ? 'item flagged' : 'item'}>
                        <button type="button" class="link" aria-pressed=${selected === business.id} onClick=${() => setSelected(business.id)}>${business.name}</button>
                        <span class="meta">${business.category} · ${business.city}</span>
                        <${ReportBadge} count=${business.scam_report_count} />
                    </li>`)}
                </ul>
                <${Pager} label="Businesses" offset=${offset} limit=${businessPage} total=${ordered.length} onChange=${setOffset} />` : null}
        </section>
        ${selected ? html`<${BusinessDetail} key=${persona?.name ?? ''} persona=${persona} businessId=${selected} version=${version} onChanged=${onChanged} onCreated=${onCreated} />` : html`<p class="hint">Choose a business to see its products and offers.</p>`}
        ${persona ? html`<${Mine} persona=${persona} created=${created[persona.name] ?? []} />` : null}
    </div>`;
}
