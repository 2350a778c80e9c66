import Crypto from 'node:crypto';


// Standard Webhooks: a secret is `whsec_` and the base64 of its key; the key signs "<id>.<timestamp>.<body>".
const secretPrefix = 'whsec_';

/** The bytes a secret's key may have: shorter is too weak to sign with, longer than any receiver expects. */
export const secretKeyBytes = { min: 24, max: 64 } as const;

// Strict base64 with its padding, the form Standard Webhooks' libraries write.
const base64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** A secret shown once it was set: its kind, never its key. */
export const maskedSecret = `${secretPrefix}********`;


/** A new secret: `whsec_` and 32 random bytes in base64. */
export function mintSecret(): string {

    return `${secretPrefix}${Crypto.randomBytes(32).toString('base64')}`;
}


/** Whether a text is a secret Standard Webhooks reads: `whsec_` and the base64 of 24 to 64 bytes. */
export function isSecret(text: string): boolean {

    if (!text.startsWith(secretPrefix)) {
        return false;
    }

    const encoded = text.slice(secretPrefix.length);
    if (!base64.test(encoded)) {
        return false;
    }

    const bytes = Buffer.from(encoded, 'base64').length;
    return bytes >= secretKeyBytes.min && bytes <= secretKeyBytes.max;
}


/** The headers that sign one attempt: its webhook-id, its timestamp (unix seconds) and `v1,<base64 HMAC-SHA256>`. */
export function signatureHeaders(secret: string, webhookId: string, at: Date, body: string): Record<string, string> {

    const timestamp = String(Math.floor(at.getTime() / 1000));
    const key = Buffer.from(secret.slice(secretPrefix.length), 'base64');
    const signature = Crypto.createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
    return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
