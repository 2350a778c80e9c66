import Fs from 'node:fs';

import Code from '@hapi/code';
import type { Server } from '@hapi/hapi';
import Lab from '@hapi/lab';

import { mintToken } from '../../lib';
import { docsPath } from '../../lib/openapi';
import { chromiumPath, closeBrowser, launchBrowser, offlinePage, skipWithoutChromium } from '../helpers/browser';
import { bearer, body, testServer } from '../helpers/server';


export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;


const skip = skipWithoutChromium('the docs page browser test');


describe('the docs page in a browser', () => {

    let server: Server;

    before(async () => {

        server = await testServer({ port: 0, host: '127.0.0.1' });
        await server.start();
    });

    after(async () => {

        await closeBrowser();
        await server.stop();
    });

    it('shows every namespace, authorizes with a minted token and runs an authenticated call', { skip, timeout: 120_000 }, async () => {

        expect(Fs.existsSync(chromiumPath), `CI=true needs Debian's chromium at ${chromiumPath}: .ci/run installs it`).to.be.true();

        // Alice has a booking, so that the page can only show it when her token went along.
        const [vehicle] = body<{ data: { id: string }[] }>(await server.inject('/v1/logistics/vehicles?available=true')).data;
        const [location] = body<{ data: { id: string }[] }>(await server.inject('/v1/logistics/locations')).data;
        const booked = await server.inject({
            method: 'POST',
            url: '/v1/logistics/bookings',
            headers: bearer(server, 'alice'),
            payload: { vehicle_id: vehicle!.id, pickup_location_id: location!.id, dropoff_location_id: location!.id, pickup_at: '2031-05-01T09:00:00Z', return_at: '2031-05-02T09:00:00Z' }
        });
        expect(booked.statusCode).to.equal(201);
        const bookingId = body(booked).id as string;

        const browser = await launchBrowser();
        const { context } = browser;
        try {
            // The page must work with no network: anything but this server is refused, and remembered.
            const { page, elsewhere, pageErrors } = await offlinePage(context, server.info.uri);

            await page.goto(server.info.uri + docsPath);
            await page.locator('h3.opblock-tag').first().waitFor();
            const tags = await page.locator('h3.opblock-tag').evaluateAll((elements) => elements.map((element) => element.getAttribute('data-tag')));
            expect(tags).to.include(['commerce', 'logistics', 'pay', 'weather']);

            await page.locator('.auth-wrapper button.authorize').click();
            await page.locator('.modal-ux input#auth-bearer-value').fill(mintToken(server.app.localgate.secret, 'alice'));
            await page.locator('.modal-ux button.authorize').click();
            await page.locator('.modal-ux button.btn-done').click();

            const operation = page.locator('#operations-logistics-getV1LogisticsBookings');
            await operation.locator('.opblock-summary-control').click();
            await operation.locator('button.try-out__btn').click();
            await operation.locator('button.execute').click();

            const answer = operation.locator('.live-responses-table .response');
            await answer.first().waitFor();
            expect((await answer.locator('.response-col_status').first().innerText()).trim()).to.equal('200');
            expect(await answer.locator('.response-col_description').first().innerText()).to.contain(bookingId);

            expect(elsewhere).to.equal([]);
            expect(pageErrors).to.equal([]);
        }
        finally {
            await browser.close();
        }
    });
});
