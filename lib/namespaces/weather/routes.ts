import type Boom from '@hapi/boom';
import type { ServerRoute } from '@hapi/hapi';

import { failure } from '../../errors';
import { weatherStatusSchema } from './schemas';


const detail = 'No weather backend is provisioned for this environment: forecasts, alerts and seasonal outlooks are not available yet';

export const weatherStatus = { configured: false, namespace: '/v1/weather', detail };


function notProvisioned(): Boom.Boom {

    return failure(501, 'weather_not_provisioned', detail, { configured: false });
}


export const routes: ServerRoute[] = [
    {
        method: 'GET',
        path: '/status',
        options: {
            auth: false,
            description: 'Whether a weather backend is provisioned (never, today)',
            tags: ['api', 'weather'],
            response: { status: { 200: weatherStatusSchema } },
            handler: () => weatherStatus
        }
    },
    {
        method: 'GET',
        path: '/forecast',
        options: {
            auth: false,
            description: 'Forecasts: 501 until a weather backend is provisioned',
            tags: ['api', 'weather'],
            plugins: { localgate: { errors: { 501: notProvisioned() } } },
            handler() {

                throw notProvisioned();
            }
        }
    }
];
