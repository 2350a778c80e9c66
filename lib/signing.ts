import Crypto from 'node:crypto';


// Standard Webhooks: a secret is `whsec_` and the base64 of its key; the key signs "<id>.<timestamp>.<body>".
const secretPrefix = 'whsec_';

/** The bytes a secret's key may have: shorter is too weak to sign with, longer than any receiver expects. */
export const secretKeyBytes = { min: 24, max: 64 } as const;

/** A secret shown once it was set: its kind, never its key. */
export const maskedSecret = `${secretPrefix}********`;


/** A new secret: `whsec_` and 32 random bytes in base64. */
export function mintSecret(): string {

    return `${secretPrefix}${Crypto.randomBytes(32).toString('base64')}`;
}


/**
 * The headers that sign one attempt: its webhook-id, its timestamp (unix seconds) and a `v1,<base64 HMAC-SHA256>` for
 * each secret, space-separated (during a rotation's overlap, the old secret's and the new one's, as Standard Webhooks
 * allows: a receiver that knows either verifies).
 */
export function signatureHeaders(secrets: string | readonly string[], webhookId: string, at: Date, body: string): Record<string, string> {

    const timestamp = String(Math.floor(at.getTime() / 1000));
    const signatures = [secrets].flat().map((secret) => {

        const key = Buffer.from(secret.slice(secretPrefix.length), 'base64');
        return `v1,${Crypto.createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
    });

    return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': signatures.join(' ') };
}
