import Code from '@hapi/code';
import Lab from '@hapi/lab';
import { createTestKit, type TestKit } from 'localgate/testing';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

// Ids of the demo data every instance starts with.
const booking = {
    vehicle_id: '67f7b2a9-5639-460c-a9f5-d114637c1b43',
    pickup_location_id: '8a5c2440-7943-4c0d-bdf4-9777cd05095e',
    dropoff_location_id: '8a5c2440-7943-4c0d-bdf4-9777cd05095e',
    pickup_at: '2030-06-01T10:00:00Z',
    return_at: '2030-06-03T10:00:00Z'
};

describe('bookings', () => {

    let kit: TestKit;

    before(async () => {

        kit = await createTestKit();                                // one server for the file
    });

    after(() => kit.close());

    it('refuses a booking that overlaps another caller\'s', async () => {

        const t = await kit.instance();                            // a fresh copy of the demo data
        const first = await t.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: t.auth('alice'), payload: booking });
        expect(first.statusCode).to.equal(201);

        const second = await t.inject({ method: 'POST', url: '/v1/logistics/bookings', headers: t.auth('bob'), payload: booking });
        expect(second.statusCode).to.equal(409);
        expect(JSON.parse(second.payload)).to.include({ code: 'booking_overlap' });
        t.close();
    });
});
