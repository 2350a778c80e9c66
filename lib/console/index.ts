import Path from 'node:path';

import Boom from '@hapi/boom';
import type { Plugin, Request } from '@hapi/hapi';
import Inert from '@hapi/inert';
import Joi from 'joi';

import { mintToken } from '../auth';
import { consoleApiModes, type ConsoleApiMode } from '../setting-error';
import { timestamp } from '../fields';
import { packageRoot } from '../paths';
import { requestIdHeaders } from '../request-id';
import { maxBodyChars, RequestFeed } from './feed';
import { inboxRoutes } from './inbox';


export const consolePath = '/console';

export const tokenPath = '/console/api/token';

export const eventsPath = '/console/api/events';

export const faviconPath = '/favicon.ico';

/** The page's own routes, always mounted; they serve files and hold no data. */
export const pagePaths = ['/', faviconPath, consolePath, '/console/assets/{file*}', '/console/vendor/{file}'];

export const consoleTokenTtlSec = 12 * 60 * 60;

const pluginName = 'localgate-console';

declare module '@hapi/hapi' {
    interface PluginProperties {
        // The live request log, which the page's event stream reads.
        [pluginName]: { feed: RequestFeed };
    }
}

const assetsRoot = Path.join(packageRoot, 'console');

// The view library, served to the page as ES modules from the installed packages.
const vendorFiles = new Map([
    ['preact.mjs', require.resolve('preact')],
    ['hooks.mjs', require.resolve('preact/hooks')],
    ['htm.mjs', Path.join(Path.dirname(require.resolve('htm')), 'htm.module.js')]
]);

export interface ConsoleOptions {
    mode: ConsoleApiMode;
    host: string;
    secret: string;
    // Values the live log must never show, wherever they appear.
    secrets: string[];
}

const optionsSchema = Joi.object<ConsoleOptions>({
    mode: Joi.string().valid(...consoleApiModes).required(),
    host: Joi.string().required(),
    secret: Joi.string().required(),
    secrets: Joi.array().items(Joi.string().min(1)).required()
});

const tokenRequest = Joi.object({
    subject: Joi.string().trim().min(1).max(100).required().description('Who the page acts as: alice, bob, or any name'),
    admin: Joi.boolean().default(false).description('true mints an admin token (role: admin), which the /_instances routes need')
}).label('ConsoleTokenRequest');

const tokenAnswer = Joi.object({
    subject: Joi.string().required(),
    token: Joi.string().required().description('A bearer token for the subject, signed by this server'),
    admin: Joi.boolean().required().description('Whether the token carries role: admin'),
    expires_at: timestamp.required()
}).label('ConsoleToken');

const consoleOnly = 'Console only: mounted when the server listens on a loopback address (or with CONSOLE_API=on), never with CONSOLE_API=off.';


/** Whether a host name or address reaches this machine only. */
export function isLoopback(host: string): boolean {

    const name = host.toLowerCase().replace(/^\[|\]$/g, '');
    return name === 'localhost' || name === '::1' || /^(?:::ffff:)?127\.\d+\.\d+\.\d+$/.test(name);
}


/** Whether the console's token and event endpoints are mounted for these settings. */
export function consoleApiMounted(mode: ConsoleApiMode, host: string): boolean {

    return mode === 'on' || (mode === 'auto' && isLoopback(host));
}


export const consolePlugin: Plugin<ConsoleOptions> = {
    name: pluginName,
    async register(server, options) {

        const settings = Joi.attempt(options, optionsSchema, 'Invalid console options');
        await server.register(Inert);

        server.route([
            {
                method: 'GET',
                path: '/',
                options: { auth: false, handler: (request, h) => h.redirect(consolePath) }
            },
            {
                // Browsers ask every origin for one; an answer keeps a 404 out of the live log and the server's log.
                method: 'GET',
                path: faviconPath,
                options: { auth: false, handler: (request, h) => h.file(Path.join(assetsRoot, 'favicon.svg'), { confine: false }).type('image/svg+xml') }
            },
            {
                method: 'GET',
                path: consolePath,
                options: { auth: false, handler: (request, h) => h.file(Path.join(assetsRoot, 'index.html'), { confine: false }) }
            },
            {
                method: 'GET',
                path: '/console/assets/{file*}',
                options: { auth: false, handler: { directory: { path: assetsRoot, listing: false, index: false } } }
            },
            {
                method: 'GET',
                path: '/console/vendor/{file}',
                options: {
                    auth: false,
                    handler(request, h) {

                        const file = vendorFiles.get(String(request.params.file));
                        if (file === undefined) {
                            throw Boom.notFound();
                        }

                        return h.file(file, { confine: false });
                    }
                }
            }
        ]);

        if (!consoleApiMounted(settings.mode, settings.host)) {
            return;
        }

        // Under auto, the token and the stream answer only requests addressed to a loopback name, so that a web
        // page whose own name was pointed at 127.0.0.1 (DNS rebinding) cannot read them.
        const addressedLocally = (request: Pick<Request, 'info'>) => {

            if (settings.mode === 'auto' && !isLoopback(request.info.hostname)) {
                throw Boom.notFound();
            }
        };

        const feed = new RequestFeed(server, settings.secrets, pluginName);
        server.expose('feed', feed);
        server.ext('onPreStop', () => feed.closeAll());

        inboxRoutes(server, addressedLocally);

        server.route<{ Payload: { subject: string; admin: boolean } }>({
            method: 'POST',
            path: tokenPath,
            options: {
                auth: false,
                // Never readable by another origin's page.
                cors: false,
                tags: ['api', 'console'],
                description: 'Mint a token for a persona, or an admin token',
                notes: `${consoleOnly} The page acts as the subject with it; with admin: true the token also carries role: admin, with which the page manages instances (/_instances). It expires after ${consoleTokenTtlSec / 3600} hours.`,
                validate: { payload: tokenRequest },
                response: { status: { 200: tokenAnswer } },
                handler(request) {

                    addressedLocally(request);
                    const { subject, admin } = request.payload;
                    return {
                        subject,
                        token: mintToken(settings.secret, subject, consoleTokenTtlSec, { admin }),
                        admin,
                        expires_at: new Date(Date.now() + consoleTokenTtlSec * 1000).toISOString()
                    };
                }
            }
        });

        server.route({
            method: 'GET',
            path: eventsPath,
            options: {
                auth: false,
                cors: false,
                tags: ['api', 'console'],
                description: 'The live request log, as Server-Sent Events',
                notes: `${consoleOnly} One \`request\` event per answered request (the console's own excepted): id, time, method, path (as the client sent it, an instance's base path included), instance (that base path, null for the default data set), query (credential-like parameters hidden), status, ms, caller, public (true for a route that reads no credentials, whose caller is therefore never known), and a body: error bodies always, success bodies of /health and of the namespaces that show theirs (${server.app.localgate.settings.namespaces.filter((namespace) => namespace.liveBodies).map((namespace) => namespace.name).join(', ')}) only, at most ${maxBodyChars} characters. A request a fault rule acted on also carries fault (the rule's id), fault_rule (the rule in words) and dropped (before, after or null); a dropped reply has status null, written (whether the request was carried out and wrote), and unsent (the status and code the client never got, null when the connection closed before the request ran). Never a header, a token or a secret.`,
                plugins: { 'hapi-swagger': { produces: ['text/event-stream'], responses: { 200: { description: '`event: request` lines whose data is one request as JSON', headers: requestIdHeaders } } } },
                handler(request, h) {

                    addressedLocally(request);
                    const stream = feed.open();
                    request.raw.res.once('close', () => stream.destroy());
                    return h.response(stream)
                        .type('text/event-stream')
                        .header('cache-control', 'no-store')
                        // A compressed stream would hold events back until the compressor's buffer fills.
                        .header('content-encoding', 'identity');
                }
            }
        });
    }
};
