import Fs from 'node:fs';

import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';



// Debian's chromium; playwright-core never downloads a browser of its own.
export const chromiumPath = '/usr/bin/chromium';

export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

// Under CI=true .ci/run installs chromium, so a missing one fails the test instead of skipping it.
export const ci = process.env.CI === 'true';

/** Whether a browser test skips: chromium is missing and this is not CI. */
export function skipWithoutChromium(what: string): boolean {

    const skip = !Fs.existsSync(chromiumPath) && !ci;
    if (skip) {
        console.log(`Skipping ${what}: ${chromiumPath} is not installed (apt-get install chromium).`);
    }

    return skip;
}


interface AxeViolation {
    id: string;
    impact: string | null;
    help: string;
    nodes: { target: string[] }[];
}

const axeSource = Fs.readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/** The serious and critical accessibility violations axe-core finds in the page as it is now. */
export async function accessibilityViolations(page: Page): Promise<string[]> {

    if (!await page.evaluate('"axe" in window')) {
        await page.addScriptTag({ content: axeSource });
    }

    // A string, evaluated in the page: this project's TypeScript knows no DOM.
    const violations = await page.evaluate('axe.run(document).then((result) => result.violations)') as AxeViolation[];

    return violations
        .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
        .map((violation) => `${violation.impact} ${violation.id}: ${violation.help} (${violation.nodes.map((node) => node.target.join(' ')).join(', ')})`);
}


/** The context's page, with every request to anywhere but the server refused and remembered, and the page's errors collected. */
export async function offlinePage(context: BrowserContext, serverUri: string): Promise<{ page: Page; elsewhere: string[]; pageErrors: string[] }> {

    const origin = new URL(serverUri).origin;
    const elsewhere: string[] = [];
    await context.route('**/*', (route) => {

        const url = route.request().url();
        if (new URL(url).origin === origin) {
            return route.continue();
        }

        elsewhere.push(url);
        return route.abort();
    });

    const page = context.pages()[0] ?? await context.newPage();
    page.setDefaultTimeout(30_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    return { page, elsewhere, pageErrors };
}


/** Every request the page sends to the server ('GET /path?query'), and every answer of 400 or more ('409 POST /path'), in order. */
export function pageTraffic(page: Page, serverUri: string): { sent: string[]; refused: string[] } {

    const origin = new URL(serverUri).origin;
    const sent: string[] = [];
    const refused: string[] = [];
    page.on('request', (request) => {

        const url = new URL(request.url());
        if (url.origin === origin) {
            sent.push(`${request.method()} ${url.pathname}${url.search}`);
        }
    });

    page.on('response', (response) => {

        if (response.status() >= 400) {
            refused.push(`${response.status()} ${response.request().method()} ${new URL(response.url()).pathname}`);
        }
    });

    return { sent, refused };
}


// One chromium for the test file, started by the first launchBrowser and stopped by closeBrowser (in the file's
// after): a fresh context per test keeps the tests apart as a fresh profile would, at a fraction of a start's cost.
let running: Promise<Browser> | undefined;


/** A context of its own in Debian's chromium, headless; a laptop's screen in UTC when asked. */
export async function launchBrowser(options: { laptop?: boolean } = {}): Promise<{ context: BrowserContext; close(): Promise<void> }> {

    running ??= chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs, timeout: 60_000 });
    const browser = await running;
    const laptop = options.laptop ? { viewport: { width: 1280, height: 800 }, timezoneId: 'UTC', locale: 'en-GB' } : {};
    const context = await browser.newContext(laptop);
    return {
        context,
        close: () => context.close()
    };
}


/** Stops the file's chromium, if launchBrowser started one. */
export async function closeBrowser(): Promise<void> {

    const started = running;
    running = undefined;
    await (await started)?.close();
}
