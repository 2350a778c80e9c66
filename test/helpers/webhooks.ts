// What the webhook suites share: a demo record to write against, the frozen instant they start from, a secret of
// their own and the endpoint as the routes answer it.

/** A business of the shipped demo data, for product writes that announce events. */
export const bakery = 'd851fadb-03ca-5a24-ba16-c15cce19933b';

/** The instant the suites freeze their clocks at. */
export const start = '2030-01-01T00:00:00.000Z';

/** An endpoint secret the suites set, so that signatures repeat from run to run. */
export const fixedSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

/** An endpoint as PUT, GET and PATCH …/webhooks answer it (`secret` masked but in PUT and rotate). */
export interface Endpoint {
    id: string;
    url: string;
    types: string[] | null;
    secret: string;
    signing_clock: string;
    retry_schedule: string[];
    created_at: string;
    disabled: boolean;
    disabled_reason: string | null;
    disabled_at: string | null;
    previous_secret_until: string | null;
    delivered?: number;
    failed?: number;
}
