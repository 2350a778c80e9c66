// What counts as a credential, in one place: the request journal, the console's live log and the log lines all hide
// what this module names. Every test here scans its input once: nothing a client sends can make it backtrack.

export const hidden = '[hidden]';

// Parts that make any name a credential's, wherever they stand in it.
const credentialPart = /passw|secret|credential|session|cookie|signature|apikey|privatekey|accesstoken|authtoken|bearer/i;

// Words that make a name a credential's when they end it: refresh_token and X-Auth, but not token_symbol or author.
const credentialLastWord = new Set(['auth', 'authorization', 'authentication', 'token', 'pass', 'pwd', 'passphrase', 'sig', 'otp']);

// A name ending in "key" is a credential's after one of these words (api_key, X-Private-Key), or alone (?key=);
// Idempotency-Key is a key of another kind, and stays.
const keyQualifier = new Set(['api', 'private', 'secret', 'access', 'signing', 'client', 'master', 'encryption', 'auth']);

// A value that is a credential whole: Basic or Bearer and one token, or a scheme whose parameters follow its name.
const schemeValue = /^\s*(?:(?:basic|bearer)\s+[\w.~+/-]+=*\s*$|(?:digest|negotiate|hoba|mutual|aws4-hmac-sha256)\s)/i;

// A run of the characters a JWT is made of, from its "eyJ": the run is taken whole, so the scan never restarts in it.
const tokenRun = /eyJ[\w.-]*/g;

// A Standard Webhooks secret, whsec_ and its key's base64, as sent or percent-encoded in a URL: the run is taken whole.
// The word alone and the API's masked form (whsec_********) are none.
const webhookSecretRun = /whsec_[\w+/=%-]+/g;

// The JSON text of a body, in tokens: a string (its closing quote missing when the text was cut inside it), or what
// lies between two strings. Every token consumes what it matched, so the text is read once.
const jsonToken = /"((?:[^"\\]|\\.)*)("?)|[^"]+/g;

const keySeparator = /^\s*:\s*/;

const scalarValue = /^(\s*:\s*)(?!null\b)([\w.+-]+)/;

const wordBreak = /[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/;


/** Whether a header, query parameter or body field of this name carries a credential. */
export function isCredentialName(name: string): boolean {

    if (credentialPart.test(name)) {
        return true;
    }

    const words = name.split(wordBreak).filter(Boolean).map((word) => word.toLowerCase());
    const [last, before] = words.slice(-2).reverse();
    if (last === undefined) {
        return false;
    }

    if (last === 'key') {
        return before === undefined || keyQualifier.has(before);
    }

    return credentialLastWord.has(last);
}


/** Whether a value is a credential whatever its name: an auth scheme and its token, a JWT, a whsec_ secret, or one of the server's secrets. */
export function isCredentialValue(value: string, secrets: readonly string[]): boolean {

    return schemeValue.test(value) || hidesSomething(value, secrets);
}


function hidesSomething(value: string, secrets: readonly string[]): boolean {

    return scrubText(value, secrets) !== value;
}


/** Hides anything shaped like a JWT or a whsec_ webhook secret, and the server's own secrets, wherever they appear in a text. */
export function scrubText(text: string, secrets: readonly string[]): string {

    // Most texts (a request's path, on every log line) hold nothing to hide: a native scan for each thing hidden
    // comes first, so that such a text costs no replace and no split.
    if (!mayHide(text, secrets)) {
        return text;
    }

    let clean = text.replace(tokenRun, (run) => (dotsIn(run) >= 2 ? hidden : run)).replace(webhookSecretRun, hidden);
    for (const secret of secrets) {
        clean = clean.split(secret).join(hidden);
    }

    return clean;
}


// Whether a text holds the start of a token or of a webhook secret, or one of the server's secrets: else scrubText
// leaves it as it is.
function mayHide(text: string, secrets: readonly string[]): boolean {

    return text.includes('eyJ') || text.includes('whsec_') || secrets.some((secret) => text.includes(secret));
}


function dotsIn(run: string): number {

    const first = run.indexOf('.');
    return first === -1 ? 0 : (run.indexOf('.', first + 1) === -1 ? 1 : 2);
}


/**
 * Hides the credentials in a JSON text, which may have been cut anywhere: the value of a field named as a credential
 * (a string, number or boolean, or a whole object or array), a string that is an auth scheme and its token, and tokens
 * and secrets anywhere. What stays is JSON still when the text was.
 */
export function scrubJsonText(text: string, secrets: readonly string[]): string {

    // Secrets as they appear inside a JSON string.
    const escaped = secrets.map((secret) => JSON.stringify(secret).slice(1, -1));
    const tokens = [...text.matchAll(jsonToken)];
    const out: string[] = [];
    let hideNext = false;
    // Above 0 inside an object or array hidden whole: strings are dropped, brackets between them counted.
    let depth = 0;
    // Set when a hidden scalar value took the token after a key: that token is not read again.
    let taken = false;
    for (const [i, [token, content, closing]] of tokens.entries()) {
        if (taken) {
            taken = false;
            continue;
        }

        if (depth > 0) {
            if (content === undefined) {
                const end = closeOf(token, depth);
                depth = end.depth;
                out.push(end.rest);
            }

            continue;
        }

        if (content === undefined) {
            out.push(token);
            continue;
        }

        if (hideNext) {
            out.push(`"${hidden}"`);
            hideNext = false;
            continue;
        }

        const after = tokens[i + 1]?.[0];
        if (after !== undefined && keySeparator.test(after) && isCredentialName(content)) {
            // A key: its value is the next string, the object or array that opens after the colon, or the scalar there.
            out.push(token);
            const value = after.replace(keySeparator, '');
            hideNext = value === '';
            if (!hideNext) {
                taken = true;
                if (value[0] === '{' || value[0] === '[') {
                    out.push(`${after.slice(0, after.length - value.length)}"${hidden}"`);
                    const end = closeOf(value, 0);
                    depth = end.depth;
                    out.push(end.rest);
                }
                else {
                    out.push(after.replace(scalarValue, `$1"${hidden}"`));
                }
            }

            continue;
        }

        out.push(`"${schemeValue.test(content) ? hidden : scrubText(content, escaped)}${closing}`);
    }

    return out.join('');
}


// Reads the brackets of a run between strings from the given depth: where it comes back to 0, what follows that.
function closeOf(run: string, depth: number): { depth: number; rest: string } {

    for (let i = 0; i < run.length; ++i) {
        const char = run[i];
        if (char === '{' || char === '[') {
            ++depth;
        }
        else if (char === '}' || char === ']') {
            if (--depth === 0) {
                return { depth, rest: run.slice(i + 1) };
            }
        }
    }

    return { depth, rest: '' };
}
