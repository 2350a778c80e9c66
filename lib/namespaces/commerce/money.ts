import type { Offer } from './store';
import { always } from '../../always';


// Amounts travel as decimal numbers (19.99) and are kept as integer minor units (1999), with as many
// decimals as ISO 4217 gives the currency. The platform's Intl data is the source of both.

const digitsByCurrency = new Map<string, number>();


/** The number of decimals amounts in a currency carry: JPY 0, USD 2, KWD 3. */
export function currencyDigits(currency: string): number {

    let digits = digitsByCurrency.get(currency);
    if (digits === undefined) {
        // Always set for style currency: the ISO 4217 minor unit.
        digits = always(new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits, `the digits of ${currency}`);
        digitsByCurrency.set(currency, digits);
    }

    return digits;
}


/** True when the amount has no more decimals than the currency allows (19.99 USD yes, 19.999 USD no, 1.5 JPY no). */
export function fitsCurrency(amount: number, currency: string): boolean {

    const factor = 10 ** currencyDigits(currency);

    // Exact on purpose: only the double nearest to some integer / factor has at most that many decimals,
    // so 0.1 + 0.2 (0.30000000000000004) does not fit USD while 0.3 does.
    return Math.round(amount * factor) / factor === amount;
}


/** The amount in integer minor units of its currency (19.99 USD is 1999); the amount must fit the currency. */
export function toMinorUnits(amount: number, currency: string): number {

    // Adding 0 turns -0 into 0.
    return Math.round(amount * 10 ** currencyDigits(currency)) + 0;
}


/** The decimal amount of a number of minor units. */
export function fromMinorUnits(minor: number, currency: string): number {

    return minor / 10 ** currencyDigits(currency);
}


/** A priced record as every engine stores it: the price in integer minor units. */
export type Priced<T> = Omit<T, 'price'> & { price_minor: number };


/** A stored offer as the API shows it (key order included, so both engines answer the same bytes). */
export function offerRecord(row: Priced<Offer>): Offer {

    return {
        id: row.id,
        product_id: row.product_id,
        title: row.title,
        price: fromMinorUnits(row.price_minor, row.currency),
        currency: row.currency,
        valid_from: row.valid_from,
        valid_until: row.valid_until,
        status: row.status,
        created_at: row.created_at,
        scam_report_count: row.scam_report_count
    };
}
