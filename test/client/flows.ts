// The main flows of a localgate user, written against types generated from the served OpenAPI document
// (test/generated/localgate.ts, written by test/openapi-client.ts). That test compiles this file with the
// TypeScript compiler before running it: a document that stops fitting these flows fails the test.
import createClient from 'openapi-fetch';

import type { components, paths } from '../generated/localgate';


export type Product = components['schemas']['Product'];

export type ScamReport = components['schemas']['ScamReport'];

export type Booking = components['schemas']['Booking'];

export type PayStatus = components['schemas']['PayStatus'];

export type ErrorBody = components['schemas']['ErrorBody'];

export interface FlowResults {
    products: Product[];
    total: number;
    businessId: string;
    businessProducts: Product[];
    created: Product;
    createdLocation: string | null;
    report: ScamReport;
    repeatedReport: { status: number; error: ErrorBody };
    reported: Product;
    booking: Booking;
    overlap: { status: number; error: ErrorBody };
    ownBookings: Booking[];
    othersBookings: Booking[];
    payStatus: PayStatus;
    wallet: { status: number; error: ErrorBody };
}


/** A typed client of a localgate at baseUrl, sending the token when one is given. */
export function localgateClient(baseUrl: string, token?: string) {

    return createClient<paths>({ baseUrl, headers: token ? { authorization: `Bearer ${token}` } : {} });
}


/** Fails with the status and error body of an answer that carries no data. */
function required<T>(answer: { data?: T; error?: unknown; response: Response }, what: string): T {

    if (answer.data === undefined) {
        throw new Error(`${what}: ${answer.response.status} ${JSON.stringify(answer.error)}`);
    }

    return answer.data;
}


/** The status and error body of an answer that had to be an error. */
function refused<E>(answer: { error?: E; response: Response }, what: string): { status: number; error: E } {

    if (answer.error === undefined) {
        throw new Error(`${what}: expected an error, got ${answer.response.status}`);
    }

    return { status: answer.response.status, error: answer.error };
}


/** Lists and filters products, creates and reports one (twice), books a vehicle (twice), lists bookings and reads pay readiness. */
export async function walkFlows(baseUrl: string, tokens: { alice: string; bob: string }): Promise<FlowResults> {

    const anonymous = localgateClient(baseUrl);
    const alice = localgateClient(baseUrl, tokens.alice);
    const bob = localgateClient(baseUrl, tokens.bob);

    // Browse the catalogue without a token, then one business's products.
    const list = required(await anonymous.GET('/v1/commerce/products', { params: { query: { limit: 100 } } }), 'list products');
    const businessId = list.data[0]!.business_id;
    const filtered = required(await anonymous.GET('/v1/commerce/products', { params: { query: { business_id: businessId } } }), 'filter products');

    // Sell something, then report it as a scam: the trust signal counts the reporter.
    const creation = await alice.POST('/v1/commerce/products', {
        body: { name: 'Typed client kettle', description: 'Made by openapi-fetch', price: 24.5, currency: 'USD', business_id: businessId }
    });
    const created = required(creation, 'create product');
    const scamReport = { target_type: 'product', target_id: created.id, reason: 'Paid and nothing arrived' } as const;
    const report = required(await bob.POST('/v1/commerce/scam-reports', { body: scamReport }), 'report product');
    const repeatedReport = refused(await bob.POST('/v1/commerce/scam-reports', { body: scamReport }), 'report product again');
    const reported = required(await anonymous.GET('/v1/commerce/products/{product_id}', { params: { path: { product_id: created.id } } }), 'read product');

    // Book an available vehicle between two locations, then list bookings as their owner and as someone else.
    const vehicles = required(await anonymous.GET('/v1/logistics/vehicles', { params: { query: { available: true } } }), 'list vehicles');
    const locations = required(await anonymous.GET('/v1/logistics/locations'), 'list locations');
    const newBooking = {
        vehicle_id: vehicles.data[0]!.id,
        pickup_location_id: locations.data[0]!.id,
        dropoff_location_id: locations.data[1]!.id,
        pickup_at: '2031-03-01T09:00:00Z',
        return_at: '2031-03-04T09:00:00Z',
        notes: 'Child seat, please'
    };
    const booking = required(await alice.POST('/v1/logistics/bookings', { body: newBooking }), 'book vehicle');
    const overlap = refused(await bob.POST('/v1/logistics/bookings', { body: { ...newBooking, pickup_at: '2031-03-03T09:00:00Z', return_at: '2031-03-05T09:00:00Z' } }), 'book the same vehicle');
    const ownBookings = required(await alice.GET('/v1/logistics/bookings'), 'list own bookings');
    const othersBookings = required(await bob.GET('/v1/logistics/bookings'), 'list bookings of another caller');

    // Pay: readiness first, then a data endpoint that answers 501 until pay is provisioned.
    const payStatus = required(await anonymous.GET('/v1/pay/status'), 'read pay status');
    const wallet = refused(await alice.GET('/v1/pay/wallet'), 'read wallet');

    return {
        products: list.data,
        total: list.total,
        businessId,
        businessProducts: filtered.data,
        created,
        createdLocation: creation.response.headers.get('location'),
        report,
        repeatedReport,
        reported,
        booking,
        overlap,
        ownBookings: ownBookings.data,
        othersBookings: othersBookings.data,
        payStatus,
        wallet
    };
}
